// Allowed: low includes nothing of the project.
#pragma once
