// The GLSL side of the test activation softsign (extra_activations.hpp), included inside shaders/epilogue.glsl's
// switch by the add_activation build (VKGEMM_EXTRA_ACTIVATIONS_GLSL): its number in shaders/gemm_abi.h
// (GEMM_ACT_<NAME>, the enumerator's number) and its case in epilogue_activation. No exp: f64 takes it, so the
// case stands outside the block the f64 variants leave out.
#define GEMM_ACT_SOFTSIGN 9u
#ifndef VKGEMM_ADD_ACTIVATION_MUTANT
    case GEMM_ACT_SOFTSIGN: return x / (EPI_T(1) + abs(x));
#else
    // The mutant: another S-shaped curve of the same slope at 0 and the same limits, x / sqrt(1 + x^2), which
    // the check must tell from the reference's formula.
    case GEMM_ACT_SOFTSIGN: return x * inversesqrt(EPI_T(1) + x * x);
#endif
