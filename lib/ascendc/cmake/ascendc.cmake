# SPDX-License-Identifier: MIT
#
# libaclmem's ascendc.cmake: CANN's kernel build functions, for AscendC
# kernels that run on the CPU (doc/ascendc.md).  A CANN program's build file
# includes it from the toolkit as it includes CANN's:
#     include(${ASCENDC_CMAKE_DIR}/ascendc.cmake)
#     ascendc_library(kernels STATIC add_custom.cpp)
# and links its program with the library, whose generated
# aclrtlaunch_<kernel>.h headers it then includes.
#
#   ascendc_library(NAME STATIC|SHARED SOURCES...)
#       Compiles the kernel sources with the host C++ compiler (C++17)
#       against the toolkit's AscendC headers (compiler/tikcpp/tikcfw).
#       For each kernel, 'extern "C" __global__ __aicore__ void k(...)',
#       writes <build>/include/NAME/aclrtlaunch_k.h declaring
#       aclrtlaunch_k(blockDim, stream, args...) and ACLRT_LAUNCH_KERNEL(k),
#       which queue a launch on the stream, and exports
#       aclmem_kernel_entry_k (<aclmem/kernel.h>), through which
#       aclrtBinaryGetFunction finds k in the SHARED library loaded by
#       aclrtBinaryLoadFromFile; a kernel<<<blockDim, l2ctrl,
#       stream>>>(args...) in a source becomes the same launch.  Sources
#       are read when cmake runs: an edit makes the next build run it again.
#   ascendc_compile_definitions(NAME [PRIVATE|PUBLIC|INTERFACE] DEFS...)
#   ascendc_include_directories(NAME [PRIVATE|PUBLIC|INTERFACE] DIRS...)
#   ascendc_compile_options(NAME [PRIVATE|PUBLIC|INTERFACE] OPTIONS...)
#       As target_compile_definitions and so on; the options keep only what
#       the host compiler understands the same way (-O, -g, -W, -D, -I,
#       -f); the device compiler's are dropped.
include_guard(GLOBAL)

# The toolkit: this file is TOOLKIT/{compiler,tools}/tikcpp/ascendc_kernel_cmake/.
get_filename_component(ASCENDC_TOOLKIT_DIR "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(ASCENDC_KERNEL_INCLUDE_DIR "${ASCENDC_TOOLKIT_DIR}/compiler/tikcpp/tikcfw")
if(NOT EXISTS "${ASCENDC_KERNEL_INCLUDE_DIR}/kernel_operator.h")
    message(FATAL_ERROR "ascendc.cmake: no AscendC headers in ${ASCENDC_KERNEL_INCLUDE_DIR}")
endif()
find_package(Threads REQUIRED)

# The C++ parameter list of a kernel, as aclrtlaunch_<kernel> takes it:
# every pointer (GM_ADDR) is a void *, a scalar keeps its type.
function(_ascendc_host_params params out)
    set(result "")
    string(REPLACE "," ";" plist "${params}")
    foreach(p IN LISTS plist)
        string(STRIP "${p}" p)
        if(p STREQUAL "" OR p STREQUAL "void")
            continue()
        endif()
        if(NOT p MATCHES "^(.*[^A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)$")
            message(FATAL_ERROR "ascendc_library: cannot read the kernel parameter '${p}'")
        endif()
        set(ptype "${CMAKE_MATCH_1}")
        set(pname "${CMAKE_MATCH_2}")
        string(STRIP "${ptype}" ptype)
        if(ptype MATCHES "GM_ADDR|\\*")
            set(ptype "void*")
        endif()
        if(result STREQUAL "")
            set(result "${ptype} ${pname}")
        else()
            set(result "${result}, ${ptype} ${pname}")
        endif()
    endforeach()
    set(${out} "${result}" PARENT_SCOPE)
endfunction()

# Write a file only when its content changes, so that nothing rebuilds
# for nothing.
function(_ascendc_write path content)
    file(WRITE "${path}.tmp" "${content}")
    configure_file("${path}.tmp" "${path}" COPYONLY)
    file(REMOVE "${path}.tmp")
endfunction()

function(ascendc_library name type)
    string(TOUPPER "${type}" type)
    if(NOT type STREQUAL "STATIC" AND NOT type STREQUAL "SHARED")
        message(FATAL_ERROR "ascendc_library(${name} ${type} ...): STATIC or SHARED")
    endif()
    if(NOT ARGN)
        message(FATAL_ERROR "ascendc_library(${name}): no kernel sources")
    endif()
    set(gendir "${CMAKE_CURRENT_BINARY_DIR}/${name}_ascendc")
    set(incdir "${CMAKE_BINARY_DIR}/include/${name}")
    file(MAKE_DIRECTORY "${gendir}" "${incdir}")
    set(ws "[ \t\r\n]")
    set(kernel_re "extern${ws}+\"C\"${ws}+(__global__|__aicore__)${ws}+(__global__|__aicore__)${ws}+void${ws}+([A-Za-z_][A-Za-z0-9_]*)${ws}*\\(([^)]*)\\)")
    set(generated "")
    set(srcdirs "")
    set(kernels "")
    foreach(src IN LISTS ARGN)
        get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
        get_filename_component(base "${src}" NAME)
        get_filename_component(dir "${abs}" DIRECTORY)
        list(APPEND srcdirs "${dir}")
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${abs}")
        file(READ "${abs}" text)
        # kernel<<<blockDim, l2ctrl, stream>>>(args) -> a launch on stream
        string(REGEX REPLACE "([A-Za-z_][A-Za-z0-9_]*)[ \t]*<<<([^;]*)>>>"
               "::AscendC::aclmem::Chevron(\"\\1\", \\1, \\2)" text "${text}")
        set(launchers "")
        string(REGEX MATCHALL "${kernel_re}" found "${text}")
        foreach(decl IN LISTS found)
            string(REGEX MATCH "${kernel_re}" m "${decl}")
            set(k "${CMAKE_MATCH_3}")
            set(params "${CMAKE_MATCH_4}")
            if(k IN_LIST kernels)
                continue()
            endif()
            list(APPEND kernels "${k}")
            _ascendc_host_params("${params}" hparams)
            set(args "")
            string(REGEX MATCHALL "[A-Za-z_][A-Za-z0-9_]*(,|$)" names "${hparams}")
            foreach(n IN LISTS names)
                string(REPLACE "," "" n "${n}")
                string(APPEND args ", ${n}")
            endforeach()
            string(TOUPPER "${k}" K)
            set(sig "uint32_t aclrtlaunch_${k}(uint32_t blockDim, aclrtStream stream")
            if(NOT hparams STREQUAL "")
                string(APPEND sig ", ${hparams}")
            endif()
            string(APPEND sig ")")
            _ascendc_write("${incdir}/aclrtlaunch_${k}.h"
"/* Generated by ascendc_library(${name}) from ${src}: do not edit. */
#ifndef HEADER_ACLRTLAUNCH_${K}_H
#define HEADER_ACLRTLAUNCH_${K}_H
#include \"acl/acl_base.h\"

#ifndef ACLRT_LAUNCH_KERNEL
#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func
#endif

/* Queue ${k} on stream over blockDim blocks: 0 or an ACL error code. */
extern \"C\" ${sig};
#endif
")
            string(APPEND launchers "
extern \"C\" ${sig}
{
\treturn ::AscendC::aclmem::LaunchKernel(\"${k}\", blockDim, stream, ${k}${args});
}

extern \"C\" __attribute__((visibility(\"default\"))) int
aclmem_kernel_entry_${k}(const void *args, size_t size, uint32_t blockDim,
\taclmem_kernel_block_fn *block, aclmem_kernel_release_fn *release, void **launch)
{
\treturn ::AscendC::aclmem::EntryLaunch(${k}, args, size, blockDim, block, release, launch);
}
")
        endforeach()
        set(out "${gendir}/${base}")
        if(NOT launchers STREQUAL "")
            # What aclrtBinaryLoadFromFile looks for: weak, as every
            # source of the library defines it.
            string(APPEND launchers "
extern \"C\" {
__attribute__((weak, visibility(\"default\"))) unsigned int aclmem_ascendc_binary = ACLMEM_BINARY_VERSION;
}
")
        endif()
        _ascendc_write("${out}" "#line 1 \"${abs}\"\n${text}\n/* Added by ascendc_library(${name}). */\n${launchers}")
        list(APPEND generated "${out}")
    endforeach()
    if(NOT kernels)
        message(WARNING "ascendc_library(${name}): no 'extern \"C\" __global__ __aicore__' kernel in ${ARGN}")
    endif()
    list(REMOVE_DUPLICATES srcdirs)
    add_library(${name} ${type} ${generated})
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON
                          CXX_EXTENSIONS OFF)
    target_compile_features(${name} PRIVATE cxx_std_17)
    # GCC's unique symbols (inline statics) would make a binary that
    # aclrtBinaryLoadFromFile loaded impossible to unload.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${name} PRIVATE -fno-gnu-unique)
    endif()
    target_include_directories(${name} PRIVATE ${srcdirs} "${ASCENDC_KERNEL_INCLUDE_DIR}")
    target_include_directories(${name} PUBLIC "${incdir}" "${ASCENDC_TOOLKIT_DIR}/include")
    target_link_libraries(${name} PUBLIC "${ASCENDC_TOOLKIT_DIR}/lib64/libascendcl.so"
                          Threads::Threads)
endfunction()

function(ascendc_compile_definitions name)
    target_compile_definitions(${name} ${ARGN})
endfunction()

function(ascendc_include_directories name)
    target_include_directories(${name} ${ARGN})
endfunction()

function(ascendc_compile_options name)
    set(kept "")
    foreach(o IN LISTS ARGN)
        if(o MATCHES "^(PRIVATE|PUBLIC|INTERFACE)$" OR o MATCHES "^-(O|g|W|D|I|f)")
            list(APPEND kept "${o}")
        else()
            message(STATUS "ascendc_compile_options(${name}): ${o} is for the device compiler: dropped")
        endif()
    endforeach()
    target_compile_options(${name} ${kept})
endfunction()
