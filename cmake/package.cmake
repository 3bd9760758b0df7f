# The release: `cmake --build build --target package` (or `cd build && cpack`)
# makes gpuscope-X.Y.Z-linux-x86_64.tar.gz (one folder, gpuscope-X.Y.Z/) and a
# .deb. Layout, the same in both (the .deb under /usr):
#   bin/gpuscope, bin/gpuscope-view, bin/gpuscope_cluster.py
#   lib/gpuscope/libgpuscope_collector.so   (found by gpuscope through ../lib/gpuscope)
#   share/gpuscope/torch-plugin/            (sources `gpuscope setup torch` builds)
#   share/gpuscope/try/                     (gpuscope try's Python hook, loaded in the job)
#   share/gpuscope/calibrate/               (bench/whatif/calibrate*.py, run by gpuscope calibrate)
#   share/doc/gpuscope/README.md, share/doc/gpuscope/docs/ (the manuals README links)
# The torch plugin itself is not packaged: it must match the job's torch, so
# `gpuscope setup torch` builds it on the machine that records.
include(GNUInstallDirs)

if(TARGET gpuscope)
  install(TARGETS gpuscope RUNTIME DESTINATION bin)
  install(PROGRAMS ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/gpuscope_cluster.py DESTINATION bin)
endif()
if(TARGET gpuscope-view)
  install(TARGETS gpuscope-view RUNTIME DESTINATION bin)
endif()
if(TARGET gpuscope_collector)
  install(TARGETS gpuscope_collector LIBRARY DESTINATION lib/gpuscope)
endif()
if(GPUSCOPE_TORCH_PLUGIN_STAGE)
  install(DIRECTORY ${GPUSCOPE_TORCH_PLUGIN_STAGE} DESTINATION share/gpuscope)
endif()
if(GPUSCOPE_TRY_STAGE)  # gpuscope try's Python hook (cli/CMakeLists.txt)
  install(DIRECTORY ${GPUSCOPE_TRY_STAGE} DESTINATION share/gpuscope)
endif()
if(GPUSCOPE_CALIBRATE_STAGE)  # gpuscope calibrate's script (cli/CMakeLists.txt)
  install(DIRECTORY ${GPUSCOPE_CALIBRATE_STAGE} DESTINATION share/gpuscope)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/gpuscope)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/gpuscope/docs FILES_MATCHING PATTERN "*.md"
        PATTERN "*.png")

set(CPACK_PACKAGE_NAME gpuscope)
set(CPACK_PACKAGE_VENDOR gpuscope)
set(CPACK_PACKAGE_CONTACT "gpuscope maintainers <gpuscope@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU profiler and bottleneck advisor for PyTorch training")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR TGZ DEB)
set(CPACK_SOURCE_GENERATOR "")
# The archive unpacks into gpuscope-X.Y.Z/ and its file name names the
# platform (cmake/package_generators.cmake, read by cpack per generator).
set(CPACK_PACKAGE_FILE_NAME gpuscope-${PROJECT_VERSION}-linux-x86_64)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/package_generators.cmake)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_CHECKSUM SHA256)
# The .deb: glibc 2.35 and GCC 12's libstdc++ (Ubuntu 22.04) are all it needs;
# Qt only for the viewer, which says which libraries it misses.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.35), libstdc++6 (>= 12)")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libqt6widgets6, libqt6opengl6, python3-distributed")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
include(CPack)
