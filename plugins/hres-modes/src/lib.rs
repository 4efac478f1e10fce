//! HRES mode logic: MODE_1, MODE_2 and MODE_3 of resources.yaml
