# Installation and the Debian package (deploy/README.md), included by the
# top-level CMakeLists.txt.
#
#   cmake --install build/release --prefix DIR   bin/ (the four binaries),
#       share/doc/roost/ (README, operations guide and its pages,
#       formats, and the copyright file in Debian's machine-readable
#       format: Apache-2.0),
#       share/roost/server.toml (the example config),
#       lib/systemd/system/roost-server.service (ExecStart in DIR/bin)
#   cd build/release && cpack -G DEB              roost_VERSION_ARCH.deb,
#       the same under /usr, its dependencies from dpkg-shlibdeps
# Both build the four binaries first when they are missing or out of date
# (after scripts/demo.sh, which builds three of them), and nothing else.
include(GNUInstallDirs)

set(ROOST_INSTALLED_TARGETS roost-server roost-load roost-get roost-admin)

# Installing builds what it installs, and only that: not `all` (CMake's
# default for `install` and cpack's "preinstall"), which is every test and
# benchmark as well. The first install rule builds the four targets with
# the build tool (a no-op when they are up to date), for `cmake --install`
# and for cpack, whose install step runs these rules.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
string(REPLACE ";" " " _roost_targets "${ROOST_INSTALLED_TARGETS}")
install(CODE "
  message(STATUS \"Building ${_roost_targets}\")
  execute_process(
    COMMAND \"${CMAKE_COMMAND}\" --build \"${PROJECT_BINARY_DIR}\"
            --config \"\${CMAKE_INSTALL_CONFIG_NAME}\"
            --target ${_roost_targets}
    RESULT_VARIABLE _roost_build_result)
  if(NOT _roost_build_result EQUAL 0)
    message(FATAL_ERROR \"cannot build ${_roost_targets} to install them\")
  endif()
")

install(TARGETS ${ROOST_INSTALLED_TARGETS}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES README.md docs/operations.md docs/architecture.md
              deploy/deb/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES deploy/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/deploy)
install(DIRECTORY docs/format/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/format
        FILES_MATCHING PATTERN "*.md")
install(DIRECTORY docs/operations/
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/operations
        FILES_MATCHING PATTERN "*.md")
install(FILES deploy/systemd/server.toml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/roost)

# The unit names /usr/bin/roost-server (the package's); an install
# elsewhere gets its own prefix in ExecStart and Documentation, written
# when installing, since `cmake --install --prefix` picks the prefix then.
install(CODE "
  file(READ \"${PROJECT_SOURCE_DIR}/deploy/systemd/roost-server.service\"
       _unit)
  string(REPLACE \"/usr/bin/\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/\"
         _unit \"\${_unit}\")
  string(REPLACE \"/usr/share/doc/roost/\"
         \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}/\" _unit \"\${_unit}\")
  file(WRITE \"${PROJECT_BINARY_DIR}/deploy/roost-server.service\" \"\${_unit}\")
  file(INSTALL \"${PROJECT_BINARY_DIR}/deploy/roost-server.service\"
       DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\"
       PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
")

set(CPACK_PACKAGE_NAME roost)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "roost maintainers <roost@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "read-only key/value server over gRPC, with its loader and clients")
set(CPACK_PACKAGE_DESCRIPTION
    "roost serves batch-computed key/value tables at memory speed: \
roost-load builds immutable table files from bulk input and publishes \
them, roost-server memory-maps them and answers Get, MultiGet and Scan \
over gRPC (with health, reflection, TLS and Prometheus metrics), and \
roost-get and roost-admin are its command-line clients. Includes a \
sandboxed systemd unit, roost-server.service (not enabled).")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # roost_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION database)
# Library dependencies as dpkg-shlibdeps (dpkg-dev) finds them; useradd
# (passwd) for postinst.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "passwd")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/deb/postinst
    ${PROJECT_SOURCE_DIR}/deploy/deb/prerm
    ${PROJECT_SOURCE_DIR}/deploy/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
