#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate Ferry's Fortran bindings from include/mpi.h.

Inputs: the public C header (constants and FERRY_DECL prototypes) and the
list of MPI_* symbols the built libmpi really defines (so a routine that is
declared but not implemented yet gets no binding, and one implemented later
gets its binding at the next build without touching this file).

Outputs (into --out):
  mpif.h           constants, the special-address common blocks, EXTERNALs;
                   valid as fixed and as free form source
  mpi.f90          module mpi: the same constants plus explicit interfaces
  mpi_f08.f90      module mpi_f08: TYPE(MPI_Comm) etc., MPI_Status as a
                   derived type, optional ierror
  fortran_gen.c    the C wrappers mpi_x_, mpi_x__, mpi_x, MPI_X (and pmpi_)
  fortran_have.h   FY_F_HAVE_<routine> for every implemented routine

The wrappers follow gfortran's calling convention: every argument by
reference, then one size_t hidden length per CHARACTER argument. MPICH's
Fortran handles are its C handles, so handles pass through unchanged.
Python 3 standard library only.
"""

import argparse
import os
import re
import sys

# Routines whose binding is written by hand in fortran_special.c (argument
# conventions differ from the C prototype), or that have none.
HAND = {
    "Init", "Init_thread", "Pcontrol", "Wtime", "Wtick", "Aint_add",
    "Aint_diff", "Address", "Type_hvector", "Type_hindexed", "Type_struct",
    "Type_extent", "Type_lb", "Type_ub", "Buffer_detach",
    "Comm_create_keyval", "Keyval_create", "Type_create_keyval",
    "Win_create_keyval", "Comm_set_attr", "Comm_get_attr", "Attr_put",
    "Attr_get", "Type_set_attr", "Type_get_attr", "Win_set_attr",
    "Win_get_attr",
}
# Fortran interfaces of the hand-written routines (name: (fortran params,
# result type or None)); parameter syntax as in PARAM_TYPES below.
HAND_IFACE = {
    "Init": ([], None),
    "Init_thread": ([("required", "int"), ("provided", "int")], None),
    "Pcontrol": ([("level", "int")], None),
    "Wtime": ([], "double"),
    "Wtick": ([], "double"),
    "Aint_add": ([("base", "aint"), ("disp", "aint")], "aint"),
    "Aint_diff": ([("addr1", "aint"), ("addr2", "aint")], "aint"),
    "Address": ([("location", "choice"), ("address", "int")], None),
    "Type_hvector": ([("count", "int"), ("blocklength", "int"),
                      ("stride", "int"), ("oldtype", "h:Datatype"),
                      ("newtype", "h:Datatype")], None),
    "Type_hindexed": ([("count", "int"), ("array_of_blocklengths", "int[]"),
                       ("array_of_displacements", "int[]"),
                       ("oldtype", "h:Datatype"),
                       ("newtype", "h:Datatype")], None),
    "Type_struct": ([("count", "int"), ("array_of_blocklengths", "int[]"),
                     ("array_of_displacements", "int[]"),
                     ("array_of_types", "h:Datatype[]"),
                     ("newtype", "h:Datatype")], None),
    "Type_extent": ([("datatype", "h:Datatype"), ("extent", "int")], None),
    "Type_lb": ([("datatype", "h:Datatype"), ("displacement", "int")], None),
    "Type_ub": ([("datatype", "h:Datatype"), ("displacement", "int")], None),
    "Buffer_detach": ([("buffer_addr", "choice"), ("size", "int")], None),
    "Comm_create_keyval": ([("comm_copy_attr_fn", "external"),
                            ("comm_delete_attr_fn", "external"),
                            ("comm_keyval", "int"),
                            ("extra_state", "aint")], None),
    "Keyval_create": ([("copy_fn", "external"), ("delete_fn", "external"),
                       ("keyval", "int"), ("extra_state", "int")], None),
    "Comm_set_attr": ([("comm", "h:Comm"), ("comm_keyval", "int"),
                       ("attribute_val", "aint")], None),
    "Comm_get_attr": ([("comm", "h:Comm"), ("comm_keyval", "int"),
                       ("attribute_val", "aint"), ("flag", "logical")],
                      None),
    "Attr_put": ([("comm", "h:Comm"), ("keyval", "int"),
                  ("attribute_val", "int")], None),
    "Attr_get": ([("comm", "h:Comm"), ("keyval", "int"),
                  ("attribute_val", "int"), ("flag", "logical")], None),
}
# Hand-written but not yet in fortran_special.c: no binding for now.
HAND_MISSING = set(HAND) - set(HAND_IFACE)

# Routines that get no Fortran binding: large-count (_c) forms exist in
# Fortran only as mpi_f08 generics; generalized requests need Fortran
# callback adaptors nobody has asked for yet; the tool information
# interface (MPI_T_*) is C only in the standard. MPI-IO (File_*,
# Register_datarep) is skipped on purpose: MPI_File is a C pointer, and a
# Fortran INTEGER handle needs a File_c2f/f2c conversion in every binding
# (and user datarep callbacks adaptors), which nobody has asked for yet.
SKIP_RE = re.compile(r"_c$|^T_|^File_|^Register_datarep")
SKIP = {
    "Grequest_start", "Status_c2f", "Status_f2c",  # C-only
    "Status_c2f08", "Status_f082c", "Status_f082f", "Status_f2f08",
}

# C int parameters that are LOGICAL in Fortran.
LOGICAL_NAMES = {"flag", "periods", "reorder", "commute", "remain_dims",
                 "high", "weighted"}

HANDLE_TYPES = ("Comm", "Group", "Datatype", "Op", "Request", "Message",
                "Errhandler", "Info", "Win", "Session")
# Handle constants and their MPI_ type, for the mpi_f08 parameters.
HANDLE_PREFIX = {
    "MPI_COMM_": "Comm", "MPI_GROUP_": "Group", "MPI_DATATYPE_": "Datatype",
    "MPI_ERRHANDLER_": "Errhandler", "MPI_ERRORS_": "Errhandler",
    "MPI_OP_": "Op", "MPI_INFO_": "Info", "MPI_WIN_NULL": "Win",
    "MPI_REQUEST_": "Request", "MPI_MESSAGE_": "Message",
    "MPI_SESSION_": "Session",
}
OP_NAMES = {"MAX", "MIN", "SUM", "PROD", "LAND", "BAND", "LOR", "BOR",
            "LXOR", "BXOR", "MINLOC", "MAXLOC", "REPLACE", "NO_OP"}

# Macros of mpi.h that are not Fortran constants.
CONST_SKIP = {"MPI_BOTTOM", "MPI_IN_PLACE", "MPI_STATUS_IGNORE",
              "MPI_STATUSES_IGNORE", "MPI_ERRCODES_IGNORE", "MPI_ARGV_NULL",
              "MPI_ARGVS_NULL", "MPI_INCLUDED", "MPI_F_STATUS_SIZE",
              "MPI_F_SOURCE", "MPI_F_TAG", "MPI_F_ERROR",
              # MPI_T handles are C pointers (MPI_T has no Fortran binding).
              "MPI_T_ENUM_NULL", "MPI_T_CVAR_HANDLE_NULL",
              "MPI_T_PVAR_HANDLE_NULL", "MPI_T_PVAR_SESSION_NULL"}
# Predefined attribute keys: MPICH's Fortran values are the C value + 1
# (fortran_special.c maps them back).
CONST_FORTRAN_KEYS = {"MPI_TAG_UB", "MPI_HOST", "MPI_IO",
                      "MPI_WTIME_IS_GLOBAL", "MPI_UNIVERSE_SIZE",
                      "MPI_LASTUSEDCODE", "MPI_APPNUM", "MPI_WIN_BASE",
                      "MPI_WIN_SIZE", "MPI_WIN_DISP_UNIT",
                      "MPI_WIN_CREATE_FLAVOR", "MPI_WIN_MODEL"}
# Constants that are INTEGER(KIND=MPI_OFFSET_KIND) in Fortran.
CONST_KIND8 = {"MPI_DISPLACEMENT_CURRENT"}

# Callback functions Fortran names as EXTERNAL (defined in
# fortran_special.c with the Fortran calling convention).
PREDEF_FNS = ["MPI_NULL_COPY_FN", "MPI_NULL_DELETE_FN", "MPI_DUP_FN",
              "MPI_COMM_NULL_COPY_FN", "MPI_COMM_NULL_DELETE_FN",
              "MPI_COMM_DUP_FN", "MPI_TYPE_NULL_COPY_FN",
              "MPI_TYPE_NULL_DELETE_FN", "MPI_TYPE_DUP_FN",
              "MPI_WIN_NULL_COPY_FN", "MPI_WIN_NULL_DELETE_FN",
              "MPI_WIN_DUP_FN"]

KINDS = {"int": "integer", "aint": "integer(kind=8)",
         "count": "integer(kind=8)", "offset": "integer(kind=8)",
         "logical": "logical", "double": "double precision"}


# ---------------------------------------------------------------- parsing


def parse_constants(text):
    """Yield (name, int value) for every integer-valued MPI_ macro."""
    values = {}
    order = []
    for m in re.finditer(r"^#define\s+(MPI_\w+)\s+(.+?)\s*(?:/\*.*)?$",
                         text, re.M):
        name, body = m.group(1), m.group(2).strip()
        if name in CONST_SKIP or name.startswith("MPI_Comm_"):
            continue
        v = None
        mm = re.fullmatch(r"\(\(MPI_\w+\)\s*(-?(?:0x[0-9a-fA-F]+|\d+))\)",
                          body)
        if mm:
            v = int(mm.group(1), 0)
        elif re.fullmatch(r"\(?-?(?:0x[0-9a-fA-F]+|\d+)\)?", body):
            v = int(body.strip("()"), 0)
        elif body in values:
            v = values[body]
        if v is None:
            continue
        if v >= 2**31:
            v -= 2**32  # a handle with bit 31 set: negative INTEGER
        values[name] = v
        if name in CONST_FORTRAN_KEYS:
            values[name] = v + 1
        if name.startswith("MPI_MAX_"):
            values[name] = v - 1  # string lengths: Fortran has no NUL
        order.append(name)
    return [(n, values[n]) for n in order]


def split_params(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch in "(["
        depth -= ch in ")]"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Param:
    """One C parameter and how Fortran passes it."""

    def __init__(self, routine, text):
        m = re.fullmatch(r"(.*?)(\w+)((?:\[\w*\])*)", text)
        self.ctype = re.sub(r"\s+", " ", m.group(1)).strip()
        self.name = m.group(2)
        self.dims = m.group(3)
        base = self.ctype.replace("const ", "").replace(" ", "")
        self.base = base.rstrip("*")
        self.ptr = base.count("*") + (1 if self.dims else 0)
        self.const = self.ctype.startswith("const")
        self.kind = self.classify(routine)

    def classify(self, routine):
        n, b = self.name, self.base
        if b == "void" and self.ptr == 1:
            return "choice"
        if b == "char" and self.ptr == 1:
            return "str_in" if self.const else "str_out"
        if b == "MPI_Status":
            return "statuses" if n.startswith("array_of") else "status"
        if b.endswith("_function") or b.endswith("_fn"):
            return "external"
        if self.ptr == 0:
            return "value"
        if self.ptr == 1:
            return "ref"
        return "unsupported"

    def ftype(self):
        """Type key for the Fortran interface."""
        b = self.base
        if self.kind in ("choice", "status", "statuses", "external"):
            return self.kind
        if self.kind in ("str_in", "str_out"):
            return "char"
        array = self.kind == "ref" and (
            self.dims or self.name.startswith("array_of"))
        if b.startswith("MPI_") and b[4:] in HANDLE_TYPES:
            t = "h:" + b[4:]
        elif b == "MPI_Aint":
            t = "aint"
        elif b == "MPI_Count":
            t = "count"
        elif b == "MPI_Offset":
            t = "offset"
        elif self.name in LOGICAL_NAMES:
            t = "logical"
        else:
            t = "int"
        if self.dims.count("[") == 2:
            return t + "[3,]"
        return t + ("[]" if array else "")


class Routine:
    def __init__(self, ret, name, params):
        self.ret = ret
        self.name = name
        params = params.strip()
        self.params = [] if params in ("void", "") else [
            Param(name, p) for p in split_params(params)]

    def supported(self):
        if self.name in SKIP or SKIP_RE.search(self.name):
            return False
        return self.ret == "int" and all(p.kind != "unsupported"
                                         for p in self.params)


def parse_routines(text):
    out = []
    for m in re.finditer(r"^FERRY_DECL\((\w[\w ]*\w|\w+),\s*(\w+),\s*"
                         r"\((.*)\)\);\s*$", text, re.M):
        ret, name, params = m.groups()
        if "..." in params:
            r = Routine(ret, name, "")
            r.varargs = True
        else:
            r = Routine(ret, name, params)
            r.varargs = False
        out.append(r)
    return out


# ---------------------------------------------------------------- C wrappers

C_HEAD = """/* Generated by src/fortran/gen_fortran.py from include/mpi.h: do not
 * edit. Fortran entry points for every MPI routine libmpi implements. */
#include "fortran.h"
"""


def c_symbols(name, prefix):
    """Linker names of one routine: gfortran, g77, plain and upper case."""
    low = (prefix + "_" + name).lower()
    return [low + "_", low + "__", low, low.upper()]


def c_wrapper(r, prefix, upper_macros):
    cname = prefix + "_" + r.name
    args, pre, call, post, lens, strs = [], [], [], [], [], []
    for p in r.params:
        n = p.name
        if p.kind == "choice":
            args.append("void *%s" % n)
            call.append("fy_f_buf(%s)" % n)
        elif p.kind in ("str_in", "str_out"):
            out = p.kind == "str_out"
            args.append("%schar *%s" % ("" if out else "const ", n))
            lens.append("size_t %s_len" % n)
            strs.append("c_" + n)
            pre.append("char *c_%s = %s;" % (n, "fy_f_str_tmp(%s_len)" % n
                                              if out else
                                              "fy_f_str_in(%s, %s_len)"
                                              % (n, n)))
            call.append("c_%s" % n)
            post.append("fy_f_str_out(%s, %s_len, c_%s, rc);" % (n, n, n)
                        if out else "free(c_%s);" % n)
        elif p.kind == "status":
            args.append("MPI_Fint *%s" % n)
            call.append("fy_f_status(%s)" % n)
        elif p.kind == "statuses":
            args.append("MPI_Fint *%s" % n)
            call.append("fy_f_statuses(%s)" % n)
        elif p.kind == "external":
            args.append("%s *%s" % (p.base, n))
            call.append(n)
        elif p.kind == "value":
            args.append("const %s *%s" % (p.base, n))
            call.append("*" + n)
        else:  # ref: arrays and outputs pass through
            t = p.base
            if p.dims.count("[") == 2:
                args.append("%s (*%s)%s" % (t, n, p.dims[p.dims.index("]")
                                                          + 1:]))
            else:
                args.append("%s *%s" % (t, n))
            if n == "array_of_errcodes":
                call.append("fy_f_errcodes(%s)" % n)
            elif n.endswith("weights"):
                call.append("fy_f_weights(%s)" % n)
            else:
                call.append(n)
    args.append("MPI_Fint *ierr")
    args += lens
    if strs:  # CHARACTER arguments copied: all or none
        pre.append("if (%s) {" % " || ".join("!" + v for v in strs))
        pre += ["    free(%s);" % v for v in strs]
        pre.append("    fy_f_ierr(ierr, MPI_ERR_NO_MEM);")
        pre += ["    return;", "}"]
    syms = c_symbols(r.name, prefix)
    out = []
    for s in syms:
        if s in upper_macros:
            out.append("#undef %s" % s)
    proto = "void %s(%s)" % (syms[0], ", ".join(args))
    out.append(proto + ";")
    out.append(proto)
    out.append("{")
    for line in pre:
        out.append("    " + line)
    out.append("    int rc = %s(%s);" % (cname, ", ".join(call)))
    for line in post:
        out.append("    " + line)
    out.append("    fy_f_ierr(ierr, rc);")
    out.append("}")
    for s in syms[1:]:
        out.append("FY_F_ALIAS(%s, %s)" % (syms[0], s))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- Fortran


def mpif_constants(consts):
    """Declarations of the constants, one statement per line (<= 72 cols)."""
    lines = []
    extra = [("MPI_SOURCE", 3), ("MPI_TAG", 4), ("MPI_ERROR", 5),
             ("MPI_STATUS_SIZE", 5), ("MPI_ADDRESS_KIND", 8),
             ("MPI_OFFSET_KIND", 8), ("MPI_COUNT_KIND", 8),
             ("MPI_INTEGER_KIND", 4)]
    for name, v in extra + consts:
        t = "INTEGER*8" if name in CONST_KIND8 else "INTEGER"
        lines.append("      %s %s" % (t, name))
        lines.append("      PARAMETER (%s=%d)" % (name, v))
    lines.append("      LOGICAL MPI_SUBARRAYS_SUPPORTED")
    lines.append("      PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)")
    lines.append("      LOGICAL MPI_ASYNC_PROTECTS_NONBLOCKING")
    lines.append("      PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)")
    return lines


# Special addresses: the same common block names as MPICH, so a binary
# compiled against MPICH's mpif.h or mpi module hands Ferry addresses it
# recognises (fortran.h declares the C side).
# MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are arrays of one (MPICH's mpif.h
# has scalars: the same storage) so that they match the weights arrays of
# the "use mpi" explicit interfaces.
COMMONS = """\
      INTEGER MPI_BOTTOM, MPI_IN_PLACE
      INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)
      INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)
      INTEGER MPI_ERRCODES_IGNORE(1)
      CHARACTER*1 MPI_ARGVS_NULL(1,1)
      CHARACTER*1 MPI_ARGV_NULL(1)
      INTEGER MPI_UNWEIGHTED(1), MPI_WEIGHTS_EMPTY(1)
      COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE
      COMMON /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE
      COMMON /MPIPRIVC/ MPI_ARGVS_NULL, MPI_ARGV_NULL
      COMMON /MPIFCMB5/ MPI_UNWEIGHTED
      COMMON /MPIFCMB9/ MPI_WEIGHTS_EMPTY
      SAVE /MPIPRIV1/, /MPIPRIV2/, /MPIPRIVC/, /MPIFCMB5/, /MPIFCMB9/
"""


def mpif_externals(have):
    lines = []
    for fn in PREDEF_FNS:
        lines.append("      EXTERNAL %s" % fn)
    for p in ("MPI", "PMPI"):
        lines.append("      EXTERNAL %s_WTIME, %s_WTICK" % (p, p))
        lines.append("      DOUBLE PRECISION %s_WTIME, %s_WTICK" % (p, p))
        if "Aint_add" in have:
            lines.append("      EXTERNAL %s_AINT_ADD, %s_AINT_DIFF" % (p, p))
            lines.append("      INTEGER*8 %s_AINT_ADD, %s_AINT_DIFF" % (p, p))
    return lines


def f_decl(ftype, name, f08, optional=False):
    """One dummy argument declaration for an interface body."""
    arr = ""
    if ftype.endswith("[3,]"):
        ftype, arr = ftype[:-4], "(3,*)"
    elif ftype.endswith("[]"):
        ftype, arr = ftype[:-2], "(*)"
    if ftype == "choice":
        return ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % name,
                "type(*), dimension(*) :: %s" % name]
    if ftype == "char":
        return ["character(len=*) :: %s" % name]
    if ftype == "external":
        return ["external :: %s" % name]
    if ftype == "status":
        return ["type(MPI_Status) :: %s" % name if f08 else
                "integer :: %s(5)" % name]
    if ftype == "statuses":
        return ["type(MPI_Status) :: %s(*)" % name if f08 else
                "integer :: %s(5,*)" % name]
    if ftype.startswith("h:"):
        t = "type(MPI_%s)" % ftype[2:] if f08 else "integer"
    else:
        t = KINDS[ftype]
    opt = ", optional" if optional else ""
    return ["%s%s :: %s%s" % (t, opt, name, arr)]


def f_interface(name, params, result, f08):
    """Interface body for MPI_<name>: params as (name, ftype) pairs."""
    names = [n for n, _ in params]
    body = []
    if result:
        head = "function MPI_%s(%s) result(res)" % (name, ", ".join(names))
        end = "end function MPI_%s" % name
    else:
        names.append("ierror")
        head = "subroutine MPI_%s(%s)" % (name, ", ".join(names))
        end = "end subroutine MPI_%s" % name
    if f08:
        body.append("import")
    body.append("implicit none")
    for n, t in params:
        body += f_decl(t, n, f08)
    if result:
        body.append("%s :: res" % KINDS[result])
    else:
        body += f_decl("int", "ierror", f08, optional=f08)
    out = ["  " + wrap(head, "  ")]
    out += ["    " + wrap(b, "    ") for b in body]
    out.append("  " + end)
    return out


def wrap(line, indent, width=100):
    """Free-form continuation for long lines."""
    if len(line) + len(indent) <= width or line.startswith("!"):
        return line
    parts = line.split(", ")
    out, cur = [], parts[0]
    for p in parts[1:]:
        if len(indent) + len(cur) + len(p) + 4 > width:
            out.append(cur + ", &")
            cur = indent + "    " + p
        else:
            cur += ", " + p
    out.append(cur)
    return "\n".join(out)


def interface_block(routines, have, f08, exclude=()):
    """The interface block of every routine, under its MPI_ and PMPI_
    names: the generated ones, then the implemented hand-written ones."""
    bodies = [(r.name, [(p.name, p.ftype()) for p in r.params], None)
              for r in routines]
    bodies += [(n,) + HAND_IFACE[n] for n in sorted(HAND_IFACE)
               if n in have and n not in exclude]
    out = ["  interface"]
    for prefix in ("", "P"):
        for name, params, res in bodies:
            for line in f_interface(name, params, res, f08):
                if line.lstrip().startswith(("subroutine", "function",
                                             "end")):
                    line = line.replace(" MPI_", " %sMPI_" % prefix, 1)
                out.append(line)
    out.append("  end interface")
    return out


def gen_mpi_module(consts, routines, have):
    out = ["! Generated by src/fortran/gen_fortran.py: do not edit.",
           "! Module mpi: mpif.h's constants plus explicit interfaces;",
           "! choice buffers accept any type, kind and rank (NO_ARG_CHECK).",
           "module mpi",
           "  implicit none"]
    out += mpif_constants(consts)
    out += COMMONS.rstrip("\n").split("\n")
    for fn in PREDEF_FNS:
        out.append("      EXTERNAL %s" % fn)
    out += interface_block(routines, have, False)
    out.append("end module mpi")
    return "\n".join(out) + "\n"


F08_STATUS = """\
  type, bind(C) :: MPI_Status
    integer(c_int) :: count_lo, count_hi_and_cancelled
    integer(c_int) :: MPI_SOURCE, MPI_TAG, MPI_ERROR
  end type MPI_Status
"""


def handle_type(name):
    if name.startswith("MPI_") and name[4:] in OP_NAMES:
        return "Op"
    for pre, t in HANDLE_PREFIX.items():
        if name.startswith(pre):
            return t
    return None


def gen_f08_module(consts, routines, have, dtype_names):
    out = ["! Generated by src/fortran/gen_fortran.py: do not edit.",
           "! Module mpi_f08: handles are derived types holding MPICH's",
           "! integer handle (MPI_VAL), MPI_Status is a derived type with",
           "! the C layout, ierror is optional. The routines are the same",
           "! entry points as mpif.h's (the representations are identical).",
           "module mpi_f08",
           "  use, intrinsic :: iso_c_binding, only: c_int",
           "  implicit none",
           "  private :: c_int"]
    for t in HANDLE_TYPES:
        out.append("  type, bind(C) :: MPI_%s" % t)
        out.append("    integer(c_int) :: MPI_VAL")
        out.append("  end type MPI_%s" % t)
    out += F08_STATUS.rstrip("\n").split("\n")
    for name, v in consts:
        t = handle_type(name)
        if name in dtype_names:
            t = "Datatype"
        if name in ("MPI_COMM_WORLD", "MPI_COMM_SELF"):
            t = "Comm"
        if name == "MPI_GROUP_EMPTY":
            t = "Group"
        if name in ("MPI_MESSAGE_NO_PROC",):
            t = "Message"
        if name in ("MPI_INFO_ENV",):
            t = "Info"
        if name in ("MPI_ERRORS_ARE_FATAL", "MPI_ERRORS_RETURN",
                    "MPI_ERRORS_ABORT"):
            t = "Errhandler"
        if name in ("MPI_COMM_TYPE_SHARED", "MPI_COMM_TYPE_HW_GUIDED",
                    "MPI_COMM_TYPE_HW_UNGUIDED", "MPI_WIN_NULL_COPY_FN",
                    "MPI_WIN_FLAVOR_CREATE", "MPI_WIN_FLAVOR_ALLOCATE",
                    "MPI_WIN_FLAVOR_DYNAMIC", "MPI_WIN_FLAVOR_SHARED",
                    "MPI_WIN_SEPARATE", "MPI_WIN_UNIFIED"):
            t = None
        if name.startswith("MPI_TYPECLASS") or name.startswith(
                "MPI_COMBINER"):
            t = None
        if t:
            out.append("  type(MPI_%s), parameter :: %s = MPI_%s(%d)"
                       % (t, name, t, v))
        else:
            k = "integer(kind=8)" if name in CONST_KIND8 else "integer"
            out.append("  %s, parameter :: %s = %d" % (k, name, v))
    for name, v in [("MPI_SOURCE", 3), ("MPI_TAG", 4), ("MPI_ERROR", 5),
                    ("MPI_STATUS_SIZE", 5), ("MPI_ADDRESS_KIND", 8),
                    ("MPI_OFFSET_KIND", 8), ("MPI_COUNT_KIND", 8),
                    ("MPI_INTEGER_KIND", 4)]:
        out.append("  integer, parameter :: %s = %d" % (name, v))
    out.append("  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .false.")
    out.append("  logical, parameter :: "
               "MPI_ASYNC_PROTECTS_NONBLOCKING = .false.")
    # Special addresses: module variables with C names fortran.h knows.
    for var, t, cname in [
            ("MPI_BOTTOM", "integer(c_int)", "ferry_f08_bottom"),
            ("MPI_IN_PLACE", "integer(c_int)", "ferry_f08_in_place"),
            ("MPI_STATUS_IGNORE", "type(MPI_Status)",
             "ferry_f08_status_ignore"),
            ("MPI_STATUSES_IGNORE(1)", "type(MPI_Status)",
             "ferry_f08_statuses_ignore"),
            ("MPI_ERRCODES_IGNORE(1)", "integer(c_int)",
             "ferry_f08_errcodes_ignore")]:
        out.append("  %s, bind(C, name=\"%s\"), target :: %s"
                   % (t, cname, var))
    for fn in PREDEF_FNS:
        out.append("  external :: %s" % fn)
    for op in ("==", "/="):
        out.append("  interface operator(%s)" % op)
        for t in HANDLE_TYPES:
            out.append("    module procedure ferry_%s_%s"
                       % ("eq" if op == "==" else "ne", t.lower()))
        out.append("  end interface")
    # MPI-1 routines removed from MPI-3 are not in mpi_f08.
    out += interface_block(routines, have, True, exclude=(
        "Type_hvector", "Type_hindexed", "Type_struct", "Type_extent",
        "Type_lb", "Type_ub", "Address", "Keyval_create", "Attr_put",
        "Attr_get"))
    out.append("contains")
    for t in HANDLE_TYPES:
        for op, fn in (("==", "eq"), ("/=", "ne")):
            out.append("  elemental logical function ferry_%s_%s(a, b)"
                       % (fn, t.lower()))
            out.append("    type(MPI_%s), intent(in) :: a, b" % t)
            out.append("    ferry_%s_%s = a%%MPI_VAL %s b%%MPI_VAL"
                       % (fn, t.lower(), op))
            out.append("  end function ferry_%s_%s" % (fn, t.lower()))
    out.append("end module mpi_f08")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--header", required=True, help="include/mpi.h")
    ap.add_argument("--symbols", required=True,
                    help="file listing libmpi's defined symbols, one a line")
    ap.add_argument("--out", required=True, help="output directory")
    args = ap.parse_args()

    with open(args.header) as f:
        text = f.read()
    with open(args.symbols) as f:
        syms = {l.split()[-1] for l in f if l.strip()}
    consts = parse_constants(text)
    dtype_names = {n for n, _ in consts
                   if re.search(r"#define %s \(\(MPI_Datatype\)" % n, text)
                   or n in ("MPI_LONG_LONG", "MPI_C_COMPLEX",
                            "MPI_INTEGER16")}
    routines = parse_routines(text)
    have = {r.name for r in routines if "MPI_" + r.name in syms
            and "PMPI_" + r.name in syms}
    gen = [r for r in routines if r.name in have and r.name not in HAND
           and not r.varargs and r.supported()]
    upper = set(re.findall(r"^#define\s+(MPI_[A-Z0-9_]+)\b", text, re.M))

    os.makedirs(args.out, exist_ok=True)

    def write(name, content):
        path = os.path.join(args.out, name)
        old = None
        if os.path.exists(path):
            with open(path) as f:
                old = f.read()
        if old != content:  # keep timestamps: no needless rebuilds
            with open(path, "w") as f:
                f.write(content)

    # fortran_have.h
    h = ["/* Generated by src/fortran/gen_fortran.py: do not edit. */"]
    for n in sorted(have):
        h.append("#define FY_F_HAVE_%s 1" % n)
    write("fortran_have.h", "\n".join(h) + "\n")

    # fortran_gen.c
    c = [C_HEAD]
    for r in gen:
        for prefix in ("MPI", "PMPI"):
            c.append(c_wrapper(r, prefix, upper))
    write("fortran_gen.c", "\n".join(c))

    # mpif.h
    m = ["! Generated by src/fortran/gen_fortran.py from Ferry's mpi.h:",
         "! do not edit. MPICH's constant values; valid in fixed and free",
         "! form source."]
    m += mpif_constants(consts)
    m += COMMONS.rstrip("\n").split("\n")
    m += mpif_externals(have)
    write("mpif.h", "\n".join(m) + "\n")

    write("mpi.f90", gen_mpi_module(consts, gen, have))
    write("mpi_f08.f90", gen_f08_module(consts, gen, have, dtype_names))

    skipped = sorted(r.name for r in routines if r.name in have
                     and r not in gen and r.name not in HAND_IFACE)
    with open(os.path.join(args.out, "fortran_skipped.txt"), "w") as f:
        f.write("\n".join(skipped) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
