	xplane.pb"*(@Hb
override_hostname	
worker0*$ROOT/../outside22026_01_02_03_04_05:localhost:9012