# The rule that compiles a shader variant to SPIR-V, used by shaders/ (every kernel) and by the add_kernel and
# add_activation tests (a kernel, an activation added by docs/architecture.md's steps): defined here, before
# them all, so all see it.
# vkgemm_shader_variant(<kernel> <type> <target env> [extra glslang args...]) compiles <kernel>.comp of
# ${CMAKE_CURRENT_SOURCE_DIR} (of VKGEMM_SHADER_SOURCE_DIR where the caller sets it: the add_activation test
# compiles the library's shaders) into ${CMAKE_CURRENT_BINARY_DIR}/spirv/<kernel>_<type>.h (an array
# spv_<kernel>_<type>) and adds it to the caller's VKGEMM_SHADER_HEADERS, VKGEMM_SHADER_INCLUDES and
# VKGEMM_SHADER_TABLE (shaders/spirv_table.cpp.in embeds the table).

# variant type name -> GLSL stored type of A and B, accumulator type, stored type of C, 4-vector of the
# stored type (the blocked kernel's). f16 inputs come as f16_f32 (fp32 accumulation, C f32), f16_f16 (fp32
# accumulation, C f16), f16_acc16 (fp16 accumulation, C f16).
set(VKGEMM_TYPE_f32 "float;float;float;vec4")
set(VKGEMM_TYPE_i32 "int;int;int;ivec4")
set(VKGEMM_TYPE_f64 "double;double;double;dvec4")
set(VKGEMM_TYPE_f16_f32 "float16_t;float;float;f16vec4")
set(VKGEMM_TYPE_f16_f16 "float16_t;float;float16_t;f16vec4")
set(VKGEMM_TYPE_f16_acc16 "float16_t;float16_t;float16_t;f16vec4")
set(VKGEMM_F16_VARIANTS f16_f32 f16_f16 f16_acc16)
# bf16, i8 and u8 inputs (the SIMT kernels): the types the shaders compute in; A and B are stored narrow and
# widened as loaded (gemm_interface.glsl). bf16_f32: C f32; bf16_bf16: C bf16 (16-bit words). i8, u8: C i32.
set(VKGEMM_TYPE_bf16_f32 "float;float;float;vec4")
set(VKGEMM_TYPE_bf16_bf16 "float;float;uint16_t;vec4")
set(VKGEMM_TYPE_i8 "int;int;int;ivec4")
set(VKGEMM_TYPE_u8 "int;int;int;ivec4")
set(VKGEMM_NARROW_FLAGS_bf16_f32 -DVKGEMM_BF16)
set(VKGEMM_NARROW_FLAGS_bf16_bf16 -DVKGEMM_BF16 -DVKGEMM_BF16_C)
set(VKGEMM_NARROW_FLAGS_i8 -DVKGEMM_INT8 -DA_T=int8_t -DB_T=int8_t)
set(VKGEMM_NARROW_FLAGS_u8 -DVKGEMM_INT8 -DA_T=uint8_t -DB_T=uint8_t)
set(VKGEMM_NARROW_VARIANTS bf16_f32 bf16_bf16 i8 u8)
# The dequantizing int8 products (GemmDesc::epilogue's scale): the same integer sums, C f32 or f16 (stored
# as 16-bit words; in the matrix kernels, an f16 matrix).
set(VKGEMM_TYPE_i8_f32 "int;int;float;ivec4")
set(VKGEMM_TYPE_i8_f16 "int;int;float16_t;ivec4")
set(VKGEMM_TYPE_u8_f32 ${VKGEMM_TYPE_i8_f32})
set(VKGEMM_TYPE_u8_f16 ${VKGEMM_TYPE_i8_f16})
set(VKGEMM_DEQUANT_FLAGS_f32 -DVKGEMM_DEQUANT)
set(VKGEMM_DEQUANT_FLAGS_f16 -DVKGEMM_DEQUANT -DVKGEMM_DEQUANT_F16)

function(vkgemm_shader_variant kernel type env)
  list(GET VKGEMM_TYPE_${type} 0 elem)
  list(GET VKGEMM_TYPE_${type} 1 acc)
  list(GET VKGEMM_TYPE_${type} 2 ctype)
  list(GET VKGEMM_TYPE_${type} 3 vec)
  set(name ${kernel}_${type})
  # The fused epilogue's type (shaders/epilogue.glsl): double for f64 sums, none for integer sums; fp16 sums
  # say so (VKGEMM_SUMS16: their epilogue still works in fp32, as the reference does, shaders/coopmat2.comp).
  set(epilogue "")
  if(acc STREQUAL "double")
    set(epilogue -DVKGEMM_EPILOGUE_DOUBLE)
  elseif(acc STREQUAL "float16_t")
    set(epilogue -DVKGEMM_SUMS16)
  elseif((acc STREQUAL "int" OR acc STREQUAL "uint") AND NOT "-DVKGEMM_DEQUANT" IN_LIST ARGN)
    set(epilogue -DVKGEMM_NO_EPILOGUE)  # integer C (the dequantizing variants' float C has an fp32 epilogue)
  endif()
  set(source ${CMAKE_CURRENT_SOURCE_DIR}/${kernel}.comp)
  if(VKGEMM_SHADER_SOURCE_DIR)
    set(source ${VKGEMM_SHADER_SOURCE_DIR}/${kernel}.comp)
  endif()
  set(header ${CMAKE_CURRENT_BINARY_DIR}/spirv/${name}.h)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/spirv)
  add_custom_command(
    OUTPUT ${header}
    COMMAND ${GLSLANG_VALIDATOR} -V --target-env ${env} -I${PROJECT_SOURCE_DIR}/shaders -DELEM_T=${elem}
            -DACC_T=${acc} -DC_T=${ctype} -DVEC_T=${vec} ${epilogue} ${ARGN}
            --vn spv_${name} --depfile ${header}.d -o ${header} ${source}
    DEPFILE ${header}.d
    DEPENDS ${source} ${PROJECT_SOURCE_DIR}/shaders/gemm_interface.glsl
            ${PROJECT_SOURCE_DIR}/shaders/gemm_abi.h ${PROJECT_SOURCE_DIR}/shaders/epilogue.glsl
    COMMENT "glslang ${kernel}.comp (${type})"
    VERBATIM)
  set(VKGEMM_SHADER_HEADERS ${VKGEMM_SHADER_HEADERS} ${header} PARENT_SCOPE)
  string(APPEND VKGEMM_SHADER_INCLUDES "#include \"${name}.h\"\n")
  string(APPEND VKGEMM_SHADER_TABLE "    {\"${name}\", spv_${name}, sizeof(spv_${name})},\n")
  set(VKGEMM_SHADER_INCLUDES ${VKGEMM_SHADER_INCLUDES} PARENT_SCOPE)
  set(VKGEMM_SHADER_TABLE ${VKGEMM_SHADER_TABLE} PARENT_SCOPE)
endfunction()

