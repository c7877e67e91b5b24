# cmake --install: headers, the static library, the vkgemm program, a CMake package (find_package(vkgemm)
# -> vkgemm::vkgemm), a pkg-config file (vkgemm.pc), and vkgemm-report with its schemas. cmake/package.cmake
# packs the same files (cpack).
include(CMakePackageConfigHelpers)

install(TARGETS vkgemm EXPORT vkgemmTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS vkgemm_program RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/include/vkgemm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/engine/generated/vkgemm/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/vkgemm)

set(VKGEMM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/vkgemm)
install(EXPORT vkgemmTargets NAMESPACE vkgemm:: DESTINATION ${VKGEMM_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vkgemmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/vkgemmConfig.cmake INSTALL_DESTINATION ${VKGEMM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vkgemmConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vkgemmConfig.cmake ${PROJECT_BINARY_DIR}/vkgemmConfigVersion.cmake
        DESTINATION ${VKGEMM_CMAKE_DIR})

configure_file(${PROJECT_SOURCE_DIR}/cmake/vkgemm.pc.in ${PROJECT_BINARY_DIR}/vkgemm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vkgemm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# vkgemm-report and the schemas it checks result files against: installed side by side (bin/ and
# share/vkgemm/), where the script looks when it is not in a source tree.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/vkgemm-report DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/docs/bench.schema.json ${PROJECT_SOURCE_DIR}/docs/vs-cublas.schema.json
              ${PROJECT_SOURCE_DIR}/docs/devices.schema.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/vkgemm)

# The C ABI (libvkgemm_c.so.0, with vkgemm/vkgemm.h above), the drop-in BLAS beside it (libvkgemm_blas.so.0,
# which finds libvkgemm_c through its $ORIGIN run path; docs/blas.md), and the Python module, which finds
# libvkgemm_c three folders up from itself (lib/python3/dist-packages/vkgemm -> lib/) or by the loader's search.
install(TARGETS vkgemm_c LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS vkgemm_blas LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_SKIP)
# vkgemm's PDGEMM for ScaLAPACK programs (docs/distributed.md), beside the drop-in BLAS it multiplies through.
if(TARGET vkgemm_pblas)
  install(TARGETS vkgemm_pblas LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_SKIP)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/engine/python/vkgemm/__init__.py ${PROJECT_SOURCE_DIR}/engine/python/vkgemm/_capi.py
              ${PROJECT_SOURCE_DIR}/engine/python/vkgemm/array.py
        DESTINATION lib/python3/dist-packages/vkgemm)
# The libblas.so.3 alternative (lib/vkgemm/libblas.so.3, finding libvkgemm_c one folder up), which the .deb
# registers with update-alternatives (cmake/debian/postinst.in).
if(TARGET vkgemm_blas_alternative)
  install(TARGETS vkgemm_blas_alternative LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/vkgemm)
endif()
