//! Everything a site admin needs to write, test and build a sluice policy plugin
