# Read by cpack once per generator (CPACK_PROJECT_CONFIG_FILE).
if(CPACK_GENERATOR STREQUAL "TGZ")
  # gpuscope-X.Y.Z-linux-x86_64.tar.gz holds one folder, gpuscope-X.Y.Z/.
  set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY OFF)
  set(CPACK_PACKAGING_INSTALL_PREFIX "/gpuscope-${CPACK_PACKAGE_VERSION}")
endif()
