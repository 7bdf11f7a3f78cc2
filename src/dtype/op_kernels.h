/* SPDX-License-Identifier: MIT */
/* The element kernels of op.c and their table, included twice by op.c: once
 * as the baseline build (FY_K(name) is name) and, on x86-64, once more
 * compiled for AVX2 (FY_K(name) is name_avx2, FY_K_ATTR a target
 * attribute); fy_op_init picks the table for this CPU. Not a header for
 * any other file. The loop macros are op.c's. */

/* clang-format off */
INT_KERNEL(k_i8, int8_t, uint8_t)
INT_KERNEL(k_i16, int16_t, uint16_t)
INT_KERNEL(k_i32, int32_t, uint32_t)
INT_KERNEL(k_i64, int64_t, uint64_t)
INT_KERNEL(k_u8, uint8_t, uint8_t)
INT_KERNEL(k_u16, uint16_t, uint16_t)
INT_KERNEL(k_u32, uint32_t, uint32_t)
INT_KERNEL(k_u64, uint64_t, uint64_t)
FLOAT_KERNEL(k_float, float)
FLOAT_KERNEL(k_double, double)
FLOAT_KERNEL(k_ldouble, long double)
COMPLEX_KERNEL(k_fcomplex, float _Complex, k_float)
COMPLEX_KERNEL(k_dcomplex, double _Complex, k_double)
COMPLEX_KERNEL(k_ldcomplex, long double _Complex, k_ldouble)

FY_K_ATTR static void FY_K(k_bool)(int op, const char *in, char *io,
                                   MPI_Count n)
{
    switch (op) {
    case OP_LAND: LOOP(_Bool, a && b);
    case OP_LOR: LOOP(_Bool, a || b);
    case OP_LXOR: LOOP(_Bool, a != b);
    default: break;
    }
}

FY_K_ATTR static void FY_K(k_byte)(int op, const char *in, char *io,
                                   MPI_Count n)
{
    switch (op) {
    case OP_BAND: LOOP(uint8_t, a & b);
    case OP_BOR: LOOP(uint8_t, a | b);
    case OP_BXOR: LOOP(uint8_t, a ^ b);
    default: break;
    }
}

/* clang-format on */

static const kernel_fn FY_K(kernel_tab)[FY_B_COUNT_OF] = {
    [FY_B_CHAR] = (char)-1 < 0 ? FY_SINT_KERNEL(char) : FY_UINT_KERNEL(char),
    [FY_B_SIGNED_CHAR] = FY_SINT_KERNEL(signed char),
    [FY_B_UNSIGNED_CHAR] = FY_UINT_KERNEL(unsigned char),
    [FY_B_BYTE] = FY_K(k_byte),
    [FY_B_SHORT] = FY_SINT_KERNEL(short),
    [FY_B_UNSIGNED_SHORT] = FY_UINT_KERNEL(unsigned short),
    [FY_B_INT] = FY_SINT_KERNEL(int),
    [FY_B_UNSIGNED] = FY_UINT_KERNEL(unsigned),
    [FY_B_LONG] = FY_SINT_KERNEL(long),
    [FY_B_UNSIGNED_LONG] = FY_UINT_KERNEL(unsigned long),
    [FY_B_LONG_LONG] = FY_SINT_KERNEL(long long),
    [FY_B_UNSIGNED_LONG_LONG] = FY_UINT_KERNEL(unsigned long long),
    [FY_B_FLOAT] = FY_K(k_float),
    [FY_B_DOUBLE] = FY_K(k_double),
    [FY_B_LONG_DOUBLE] = FY_K(k_ldouble),
    [FY_B_C_BOOL] = FY_K(k_bool),
    [FY_B_INT8] = FY_K(k_i8),
    [FY_B_INT16] = FY_K(k_i16),
    [FY_B_INT32] = FY_K(k_i32),
    [FY_B_INT64] = FY_K(k_i64),
    [FY_B_UINT8] = FY_K(k_u8),
    [FY_B_UINT16] = FY_K(k_u16),
    [FY_B_UINT32] = FY_K(k_u32),
    [FY_B_UINT64] = FY_K(k_u64),
    [FY_B_AINT] = FY_SINT_KERNEL(MPI_Aint),
    [FY_B_OFFSET] = FY_SINT_KERNEL(MPI_Offset),
    [FY_B_COUNT] = FY_SINT_KERNEL(MPI_Count),
    [FY_B_C_FLOAT_COMPLEX] = FY_K(k_fcomplex),
    [FY_B_C_DOUBLE_COMPLEX] = FY_K(k_dcomplex),
    [FY_B_C_LONG_DOUBLE_COMPLEX] = FY_K(k_ldcomplex),
};
