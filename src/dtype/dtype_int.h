/* SPDX-License-Identifier: MIT */
/* Private to src/dtype: the basic-type table and the op module's setup. */
#ifndef FY_DTYPE_INT_H
#define FY_DTYPE_INT_H

#include "dtype/dtype.h"

struct fy_basic_info {
    size_t size;
    size_t align;
};
extern const struct fy_basic_info fy_basic_tab[FY_B_COUNT_OF];

/* Predefined ops; called from fy_dtype_init / fy_dtype_finalize. */
int fy_op_init(void);
void fy_op_finalize(void);

#endif /* FY_DTYPE_INT_H */
