# SPDX-License-Identifier: MIT
#
# libaclmem's tikicpulib package: what the build files of CANN's CPU debug
# mode find (doc/ascendc.md):
#     set(CMAKE_PREFIX_PATH ${ASCEND_HOME_PATH}/tools/tikicpulib/lib/cmake)
#     find_package(tikicpulib REQUIRED)
#     target_link_libraries(prog PRIVATE ascendcl tikicpulib::${SOC_VERSION})
# The target gives a program and its kernel sources the AscendC headers
# with tikicpulib.h (ICPU_RUN_KF, GmAlloc, GmFree), ASCENDC_CPU_DEBUG,
# C++17, threads, and the toolkit's include/ and lib64/ (for ascendcl).
# Kernels run on the CPU whatever the SoC, so every SoC name is the same
# target: SOC_VERSION's, when it is set, and the names CANN's samples pass.

# This file is TOOLKIT/tools/tikicpulib/lib/cmake/tikicpulib/ (a link).
get_filename_component(_tikicpulib_tk "${CMAKE_CURRENT_LIST_DIR}/../../../../.." ABSOLUTE)
if(NOT EXISTS "${_tikicpulib_tk}/compiler/tikcpp/tikcfw/tikicpulib.h")
    set(tikicpulib_FOUND FALSE)
    set(tikicpulib_NOT_FOUND_MESSAGE
        "${CMAKE_CURRENT_LIST_DIR} is not TOOLKIT/tools/tikicpulib/lib/cmake/tikicpulib of a toolkit with AscendC")
    return()
endif()
find_package(Threads REQUIRED)

if(NOT TARGET tikicpulib::tikicpulib)
    add_library(tikicpulib::tikicpulib INTERFACE IMPORTED)
    set_target_properties(tikicpulib::tikicpulib PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES
            "${_tikicpulib_tk}/compiler/tikcpp/tikcfw;${_tikicpulib_tk}/include"
        INTERFACE_COMPILE_DEFINITIONS ASCENDC_CPU_DEBUG
        INTERFACE_COMPILE_FEATURES cxx_std_17
        INTERFACE_LINK_DIRECTORIES "${_tikicpulib_tk}/lib64"
        INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()

set(_tikicpulib_socs
    Ascend910A Ascend910B Ascend910ProA Ascend910ProB Ascend910PremiumA
    Ascend910B1 Ascend910B2 Ascend910B2C Ascend910B3 Ascend910B4 Ascend910B4-1
    Ascend910_9391 Ascend910_9392 Ascend910_9381 Ascend910_9382
    Ascend910_9372 Ascend910_9362
    Ascend310P1 Ascend310P3 Ascend310P5 Ascend310P7
    Ascend310B1 Ascend310B2 Ascend310B3 Ascend310B4)
if(DEFINED SOC_VERSION AND NOT SOC_VERSION STREQUAL "")
    list(APPEND _tikicpulib_socs "${SOC_VERSION}")
endif()
foreach(_soc IN LISTS _tikicpulib_socs)
    if(NOT TARGET tikicpulib::${_soc})
        add_library(tikicpulib::${_soc} INTERFACE IMPORTED)
        set_target_properties(tikicpulib::${_soc} PROPERTIES
            INTERFACE_LINK_LIBRARIES tikicpulib::tikicpulib)
    endif()
endforeach()
set(tikicpulib_FOUND TRUE)
