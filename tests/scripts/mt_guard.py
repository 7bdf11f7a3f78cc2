#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every MPI entry point opens with the lock guard its class allows under
MPI_THREAD_MULTIPLE (src/util/mt.h explains the locks and their order).

Reads src/**/*.c: each function defined with FY_API (PMPI_x, also inside
the macros that generate entry points) must open with
- FY_MT_NONE() exactly when it is in LOCK_FREE below (the reviewed list of
  calls that read only immutable or per-call state; nothing else may skip
  the locks),
- FY_MT_OBJ() exactly when it is in OBJ (object management that touches
  no communication state),
- FY_MT_WIN(win) / FY_MT_FILE(fh) exactly when it is in WIN / FILE,
- FY_MT_ENTER() (the engine lock) otherwise,
except PMPI_Abort, which must never wait for a lock. Prints the offenders
(and list entries that name no entry point) and exits 1, else prints the
counts and exits 0."""
import glob
import os
import re
import sys

def expand(names):
    out=set()
    for n in names.split():
        out.add('PMPI_'+n)
    return out
# No lock. Reviewed: each reads only per-call arguments, process constants
# set before threads may call (thread level, main thread, version), or
# objects that are immutable while their handle is valid (communicator rank
# and size, committed datatype layout, groups), found through handle tables
# whose lookups are safe beside concurrent creation (src/util/handle.h).
# Error_class/Error_string take the engine lock for user-added codes.
LOCK_FREE = expand('''
Finalized Initialized Get_library_version Get_version Is_thread_main Pcontrol
Query_thread Wtick Wtime
Comm_rank Comm_size Comm_remote_size Comm_test_inter Group_rank Group_size
Topo_test Dims_create
Address Aint_add Aint_diff Get_address Get_count Get_count_c Get_elements
Get_elements_c Get_elements_x Status_set_cancelled Status_set_elements
Status_set_elements_x Status_set_elements_c Test_cancelled
Type_extent Type_get_extent Type_get_extent_c Type_get_extent_x
Type_get_true_extent Type_get_true_extent_c Type_get_true_extent_x Type_lb
Type_ub Type_size Type_size_c Type_size_x Op_commutative
Pack_size Pack_size_c Pack Pack_c Unpack Unpack_c
Status_c2f Status_c2f08 Status_f082c Status_f082f Status_f2c Status_f2f08
Error_class Error_string
''')
# The object lock: datatype, group, op, info, error-handler and keyval
# management (attribute set/get/delete stay on the engine lock: communicator
# duplication and freeing walk the same lists).
OBJ = expand('''
Type_commit Type_contiguous Type_contiguous_c Type_create_hindexed
Type_create_hindexed_block Type_create_hindexed_block_c Type_create_hindexed_c
Type_create_hvector Type_create_hvector_c Type_create_indexed_block
Type_create_indexed_block_c Type_create_resized Type_create_resized_c
Type_create_struct Type_create_struct_c Type_dup Type_free Type_get_name
Type_set_name Type_hindexed Type_hvector Type_indexed Type_indexed_c
Type_struct Type_vector Type_vector_c Type_match_size Op_create Op_create_c
Op_free
Pack_external Pack_external_c Pack_external_size Pack_external_size_c
Unpack_external Unpack_external_c Type_create_darray Type_create_darray_c
Type_create_f90_complex Type_create_f90_integer Type_create_f90_real
Type_create_subarray Type_create_subarray_c Type_get_contents
Type_get_contents_c Type_get_envelope Type_get_envelope_c
Group_difference Group_excl Group_free Group_incl Group_intersection
Group_range_excl Group_range_incl Group_union Group_compare
Group_translate_ranks Comm_group Comm_remote_group
Comm_create_errhandler Errhandler_create Errhandler_free
Win_create_errhandler File_create_errhandler Session_create_errhandler
Info_create Info_create_env Info_delete Info_dup Info_free Info_get
Info_get_nkeys Info_get_nthkey Info_get_string Info_get_valuelen Info_set
Comm_create_keyval Keyval_create Type_create_keyval Win_create_keyval
''')
# The window's lock: RMA data movement and flushes (no epoch changes).
WIN = expand('''
Put Put_c Get Get_c Accumulate Accumulate_c Get_accumulate Get_accumulate_c
Fetch_and_op Compare_and_swap Win_flush Win_flush_all Win_flush_local
Win_flush_local_all Win_sync
Rput Rput_c Rget Rget_c Raccumulate Raccumulate_c Rget_accumulate
Rget_accumulate_c
''')
# The file's lock: independent I/O and the individual file pointer.
FILE = expand('''
File_read_at File_read_at_c File_write_at File_write_at_c File_read
File_read_c File_write File_write_c File_seek File_get_position
File_get_byte_offset File_get_size File_get_amode File_get_atomicity
''')
EXEMPT = {'PMPI_Abort'}


GUARD = {}
for _n in LOCK_FREE:
    GUARD[_n] = "FY_MT_NONE();"
for _n in OBJ:
    GUARD[_n] = "FY_MT_OBJ();"
for _n in WIN:
    GUARD[_n] = "FY_MT_WIN(win);"
for _n in FILE:
    GUARD[_n] = "FY_MT_FILE(fh);"
assert len(GUARD) == len(LOCK_FREE) + len(OBJ) + len(WIN) + len(FILE), \
    "an entry point is in two lists"

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "src")
bad, seen, count = [], set(), {}
for path in sorted(glob.glob(os.path.join(src, "**", "*.c"), recursive=True)):
    lines = open(path, encoding="utf-8").read().split("\n")
    pending = None
    for i, line in enumerate(lines):
        code = line.rstrip("\\").strip()
        if code.startswith("FY_API") and not code.endswith(";") \
                and "=" not in code:
            m = re.search(r"(PMPI_\w+)\s*\(", code)
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            pending = (m.group(1) if m else nxt.split("(")[0], i + 1)
        elif pending and code == "{":
            name, at = pending
            pending = None
            seen.add(name)
            body = lines[i + 1].rstrip("\\").strip() if i + 1 < len(lines) else ""
            if name in EXEMPT:
                continue
            want = GUARD.get(name, "FY_MT_ENTER();")
            count[want] = count.get(want, 0) + 1
            if body != want:
                bad.append(f"{os.path.relpath(path, src)}:{at}: {name} opens "
                           f"with '{body}', wants '{want}'")
for name in sorted(set(GUARD) - seen):
    bad.append(f"{name}: listed in mt_guard.py but not an entry point")
if bad:
    print("entry points without their lock guard as the first statement:")
    print("\n".join(bad))
    sys.exit(1)
print("mt_guard: " + ", ".join(f"{n} {g}" for g, n in sorted(count.items()))
      + f" ({len(seen)} entry points)")
