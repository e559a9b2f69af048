	xplane.pb"-(Hb#
neuronprof_flight_recorder
yes22026_01_02_03_04_05:localhost:9012H