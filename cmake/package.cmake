# cpack: what cmake/install.cmake installs, as a Debian package (.deb, under /usr) and a relocatable
# .tar.gz (the CMake package and vkgemm.pc find their files relative to themselves). tools/dev/package.sh
# builds both; the package CTest test unpacks the .deb and runs what it holds.
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_PACKAGE_NAME vkgemm)
set(CPACK_PACKAGE_VENDOR vkgemm)
set(CPACK_PACKAGE_CONTACT "vkgemm <dev@vkgemm>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "${PROJECT_DESCRIPTION}: the vkgemm program, the library, a drop-in BLAS, a Python module and vkgemm-report")
set(CPACK_PACKAGE_DESCRIPTION "GEMM on any Vulkan device: the vkgemm program (devices, run, bench, tune, peak),
the static library with its headers, CMake package and pkg-config file, its C ABI (libvkgemm_c), a drop-in
BLAS that runs sgemm/dgemm on the device (libvkgemm_blas, LD_PRELOAD), the Python module (vkgemm, NumPy),
and vkgemm-report, which compares devices from their result files.")
set(CPACK_PACKAGE_FILE_NAME "vkgemm-${PROJECT_VERSION}-${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_PACKAGE_CHECKSUM SHA256)

# Debian: the C and C++ runtimes from dpkg-shlibdeps; the loader is opened at run time (volk), so named here.
# vkgemm-report needs Python with matplotlib and jsonschema, the headers need the Vulkan headers, and a
# machine without a GPU driver runs on Mesa's lavapipe: recommended, so a server installs the program alone.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libvulkan1")
# The drop-in BLAS forwards what the device does not take to a CPU BLAS (libblas3 or another libblas.so.3);
# the Python module needs NumPy.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "python3, python3-numpy, libblas3 | libblas.so.3, python3-matplotlib, python3-jsonschema, libvulkan-dev, mesa-vulkan-drivers | vulkan-icd")
# postinst, prerm, postrm: ldconfig for libvkgemm_c and libvkgemm_blas, and the libblas.so.3 alternative
# registered and removed (docs/blas.md). No shlibs file: it would claim libblas.so.3 for this package.
if(TARGET vkgemm_blas_alternative AND CMAKE_LIBRARY_ARCHITECTURE)
  set(VKGEMM_TRIPLET ${CMAKE_LIBRARY_ARCHITECTURE})
  set(VKGEMM_ALTERNATIVE ${CMAKE_INSTALL_LIBDIR}/vkgemm/libblas.so.3)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/postinst.in ${PROJECT_BINARY_DIR}/debian/postinst @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/prerm.in ${PROJECT_BINARY_DIR}/debian/prerm @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/postrm.in ${PROJECT_BINARY_DIR}/debian/postrm @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
      "${PROJECT_BINARY_DIR}/debian/postinst;${PROJECT_BINARY_DIR}/debian/prerm;${PROJECT_BINARY_DIR}/debian/postrm")
endif()
# The prefixes are the generators' own: /usr in the .deb, none (bin/, lib/, ...) in the .tar.gz.

include(CPack)
