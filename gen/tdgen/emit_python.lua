-- Emits the Python binding's op layer: td_python.c, one CPython function per op and tuple
-- of the specs (keywords are the spec's argument names, the doc string is the spec's), and
-- tdispatch.pyi, their stub for editors and type checkers. The hand-written rest of the
-- module (the Tensor and Device types, errors, interop, module init) is in python/; the
-- converters the generated code calls are declared in python/tdpy.h.
local util = require("tdgen.util")
local schema = require("tdgen.schema")

local M = {}

-- How each argument type reaches C. Scalars go through PyArg format codes; the rest through
-- converters (tdpy_conv_*, python/tdpy.h) into a C variable. `free`: a cleanup call the
-- function makes after the op. `py`: the stub's type.
local SCALAR = {
  f32 = { code = "f", ctype = "float", py = "float" },
  i32 = { code = "i", ctype = "int32_t", cast = "int", py = "int" },
  i64 = { code = "L", ctype = "long long", cast = "int64_t", py = "int" },
  dim = { code = "L", ctype = "long long", cast = "int64_t", py = "int" },
}

-- Host data dtypes the hand-written converters handle (python/tdispatch_module.c); other
-- ones make the function a NotImplementedError stub. Kept here, not read from the schema's
-- dtype table, so that a new dtype of the specs cannot change what the binding passes.
local HOST_DTYPES = { f32 = "TD_F32", i32 = "TD_I32", bool = "TD_BOOL" }

local function kind(a)
  local t = a.t
  if t.tensor then return "tensor" end
  if t.list then return "list" end
  if t.device then return "device" end
  if t.group then return "group" end
  if t.array then return "array" end
  if t.host_in then return "host_in" end
  if t.host_out then return "host_out" end
  if SCALAR[a.type] then return "scalar" end
  if a.type == "u64" then return "u64" end
  if t.enum then return "enum" end
  return nil
end

-- The argument types this emitter cannot pass (a new type of the specs): the function then
-- raises NotImplementedError, and the suite's every-op test names it.
local function unsupported(args)
  for _, a in ipairs(args) do
    if kind(a) == nil then return a end
    if a.t.host_in and not HOST_DTYPES[a.t.host_in] then return a end
    if a.t.host_out and not HOST_DTYPES[a.t.host_out] then return a end
  end
end

local function py_type(a)
  local k = kind(a)
  if k == "tensor" then return "Tensor" end
  if k == "list" then return "Sequence[Tensor]" end
  if k == "device" then return "Device" end
  if k == "group" then return "Group" end
  if k == "array" then return "Sequence[int]" end
  if k == "host_in" then return "Any" end
  if k == "scalar" then return SCALAR[a.type].py end
  if k == "u64" then return "int" end
  if k == "enum" then return "str | int" end
  return "Any"
end

-- Python-visible arguments (host outputs are results, not arguments).
local function py_args(args)
  local r = {}
  for _, a in ipairs(args) do if kind(a) ~= "host_out" then r[#r + 1] = a end end
  return r
end

local function c_escape(s)
  return (util.c_string(s))
end

local function doc_text(name, args, doc, semantics, result)
  local names = {}
  for _, a in ipairs(py_args(args)) do names[#names + 1] = a.name end
  local s = name .. "(" .. table.concat(names, ", ") .. ")\n--\n\n" .. doc
  if semantics then s = s .. "\n\nNote: " .. semantics .. "." end
  s = s .. "\n\nReturns " .. result .. ". Errors raise tdispatch.Error subclasses with the library's message."
  return s
end

-- Declarations, parse format and argument pointers of one function.
local function emit_parse(b, fname, args)
  local kw, fmt, ptrs = {}, {}, {}
  for _, a in ipairs(args) do
    local k = kind(a)
    local n = "a_" .. a.name
    if k == "tensor" then
      b:put("    const td_tensor *%s = NULL;", n)
      fmt[#fmt + 1] = "O&"; ptrs[#ptrs + 1] = "tdpy_conv_tensor, &" .. n
    elseif k == "list" then
      b:put("    tdpy_tensors %s = { 0 };", n)
      fmt[#fmt + 1] = "O&"; ptrs[#ptrs + 1] = "tdpy_conv_tensors, &" .. n
    elseif k == "device" then
      b:put("    td_device *%s = NULL;", n)
      fmt[#fmt + 1] = "O&"; ptrs[#ptrs + 1] = "tdpy_conv_device, &" .. n
    elseif k == "group" then
      b:put("    td_group *%s = NULL;", n)
      fmt[#fmt + 1] = "O&"; ptrs[#ptrs + 1] = "tdpy_conv_group, &" .. n
    elseif k == "array" then
      b:put("    tdpy_i64s %s = { 0 };", n)
      fmt[#fmt + 1] = "O&"; ptrs[#ptrs + 1] = "tdpy_conv_i64s, &" .. n
    elseif k == "host_in" then
      b:put("    tdpy_host %s = { .dtype = %s };", n, HOST_DTYPES[a.t.host_in])
      fmt[#fmt + 1] = "O&"; ptrs[#ptrs + 1] = "tdpy_conv_host, &" .. n
    elseif k == "scalar" then
      local s = SCALAR[a.type]
      b:put("    %s %s = 0;", s.ctype, n)
      fmt[#fmt + 1] = s.code; ptrs[#ptrs + 1] = "&" .. n
    elseif k == "u64" then
      b:put("    uint64_t %s = 0;", n)
      fmt[#fmt + 1] = "O&"; ptrs[#ptrs + 1] = "tdpy_conv_u64, &" .. n
    elseif k == "enum" then
      b:put("    int %s = 0;", n)
      fmt[#fmt + 1] = "O&"; ptrs[#ptrs + 1] = "tdpy_conv_" .. a.type .. ", &" .. n
    end
    if k ~= "host_out" then kw[#kw + 1] = c_escape(a.name) end
  end
  kw[#kw + 1] = "NULL"
  b:put("    static char *kwlist[] = { %s };", table.concat(kw, ", "))
  local call = "    if (!PyArg_ParseTupleAndKeywords(args, kwargs, \"" .. table.concat(fmt) .. ":" .. fname ..
    "\", kwlist"
  if #ptrs > 0 then call = call .. ", " .. table.concat(ptrs, ", ") end
  b:put("%s))", call)
  b:put("        return NULL;")
end

-- Cleanups after the call (converters that allocated).
local function emit_free(b, args, indent)
  indent = indent or "    "
  for _, a in ipairs(args) do
    local k = kind(a)
    if k == "list" then b:put("%stdpy_tensors_free(&a_%s);", indent, a.name)
    elseif k == "array" then b:put("%stdpy_i64s_free(&a_%s);", indent, a.name)
    elseif k == "host_in" then b:put("%stdpy_host_free(&a_%s);", indent, a.name) end
  end
end

-- The C call's argument list (the entry's parameters in order).
local function call_args(args)
  local r = {}
  for _, a in ipairs(args) do
    local k, n = kind(a), "a_" .. a.name
    if k == "list" then r[#r + 1] = n .. ".v"; r[#r + 1] = n .. ".n"
    elseif k == "array" then r[#r + 1] = n .. ".v"; r[#r + 1] = n .. ".n"
    elseif k == "host_in" then r[#r + 1] = "(" .. a.t.params[1]:match("^(.-)%%s"):gsub("%s+$", "") .. ")" .. n .. ".p"
    elseif k == "host_out" then r[#r + 1] = "(" .. a.t.params[1]:match("^(.-)%%s"):gsub("%s+$", "") .. ")" ..
      "h_out.p"; r[#r + 1] = "h_out.n"
    elseif k == "scalar" then
      local s = SCALAR[a.type]
      r[#r + 1] = s.cast and ("(" .. s.cast .. ")" .. n) or n
    elseif k == "enum" then r[#r + 1] = "(" .. a.t.params[1]:match("^(%S+)") .. ")" .. n
    else r[#r + 1] = n end
  end
  return r
end

-- The element count a host input must hold: the product of the op's `shape` argument.
local function shape_arg(args)
  for _, a in ipairs(args) do if a.type == "shape" then return a end end
end

local function first_tensor(args)
  for _, a in ipairs(args) do if kind(a) == "tensor" then return a end end
end

local function emit_function(b, fname, args, results, doc)
  b:put("")
  b:put("PyDoc_STRVAR(tdpy_doc_%s, %s);", fname, c_escape(doc))
  b:put("")
  b:put("static PyObject *tdpy_fn_%s(PyObject *self, PyObject *args, PyObject *kwargs)", fname)
  b:put("{")
  b:put("    (void)self;")
  local bad = unsupported(args)
  if bad then
    b:put("    (void)args;")
    b:put("    (void)kwargs;")
    b:put("    PyErr_SetString(PyExc_NotImplementedError, %s);",
      c_escape(fname .. ": the binding cannot pass argument '" .. bad.name .. "' of type " .. bad.type))
    b:put("    return NULL;")
    b:put("}")
    return
  end
  emit_parse(b, fname, args)
  local sa = shape_arg(args)
  local host_out
  for _, a in ipairs(args) do
    if kind(a) == "host_in" and sa then
      b:put("    if (tdpy_host_check(&a_%s, a_%s.v, a_%s.n, %s) < 0) {", a.name, sa.name, sa.name, c_escape(a.name))
      emit_free(b, args, "        ")
      b:put("        return NULL;")
      b:put("    }")
    end
    if kind(a) == "host_out" then host_out = a end
  end
  if host_out then
    local t = first_tensor(args)
    b:put("    tdpy_host h_out = { .dtype = %s };", HOST_DTYPES[host_out.t.host_out])
    b:put("    if (tdpy_host_out_alloc(&h_out, a_%s) < 0) {", t.name)
    emit_free(b, args, "        ")
    b:put("        return NULL;")
    b:put("    }")
  end
  local ca = call_args(args)
  for _, r in ipairs(results) do b:put("    td_tensor *r_%s = NULL;", r); ca[#ca + 1] = "&r_" .. r end
  b:put("    td_status st;")
  b:put("    Py_BEGIN_ALLOW_THREADS")
  b:put("    st = td_%s(%s);", fname, table.concat(ca, ", "))
  b:put("    Py_END_ALLOW_THREADS")
  emit_free(b, args)
  if host_out then
    b:put("    return tdpy_host_result(st, &h_out);")
  elseif #results == 0 then
    b:put("    return tdpy_none_result(st);")
  elseif #results == 1 then
    b:put("    return tdpy_tensor_result(st, r_%s);", results[1])
  else
    local rs = {}
    for i, r in ipairs(results) do rs[i] = "r_" .. r end
    b:put("    td_tensor *rs[] = { %s };", table.concat(rs, ", "))
    b:put("    return tdpy_tuple_result(st, rs, %d);", #results)
  end
  b:put("}")
end

local function banner(b, what, specs_note, comment)
  local cont = comment == "/*" and " *" or comment
  b:put("%s %s", comment, what)
  b:put("%s Generated by gen/tdgen.lua (emit_python.lua) from %s. Do not edit: change the specs", cont, specs_note)
  b:put("%s or the generator and rebuild (or run the `regenerate` target).", cont)
end

local function entries(model)
  local r = {}
  for _, op in ipairs(model.ops) do
    local results = schema.classes[op.returns] and { "out" } or {}
    local res_text = schema.classes[op.returns] and ("a new " .. op.returns .. " Tensor")
      or (op.returns == "host" and "a list of the tensor's values, row-major") or "None"
    r[#r + 1] = { name = op.name, args = op.args, results = results,
      doc = doc_text(op.name, op.args, op.doc, op.semantics, res_text), pyret = #results == 1 and "Tensor"
        or (op.returns == "host" and "list[Any]" or "None") }
  end
  for _, t in ipairs(model.tuples or {}) do
    local results, names = {}, {}
    for i, p in ipairs(t.parts) do results[i] = p.result; names[i] = p.result .. " (" .. p.op.name .. ")" end
    local rt = {}
    for i = 1, #results do rt[i] = "Tensor" end
    r[#r + 1] = { name = t.name, args = t.args, results = results,
      doc = doc_text(t.name, t.args, t.doc, nil, "a tuple of new Tensors: " .. table.concat(names, ", ")),
      pyret = "tuple[" .. table.concat(rt, ", ") .. "]" }
  end
  return r
end

function M.module_source(model, specs_note)
  local b = util.buffer()
  banner(b, "The tdispatch Python module's op functions: one per op and tuple of the specs.", specs_note, "/*")
  b:put(" * The hand-written module (python/tdispatch_module.c) adds tdpy_op_methods to the module. */")
  b:put("#include \"tdpy.h\"")
  local es = entries(model)
  for _, e in ipairs(es) do emit_function(b, e.name, e.args, e.results, e.doc) end
  b:put("")
  b:put("PyMethodDef tdpy_op_methods[] = {")
  for _, e in ipairs(es) do
    b:put("    { %s, (PyCFunction)(void (*)(void))tdpy_fn_%s, METH_VARARGS | METH_KEYWORDS, tdpy_doc_%s },",
      c_escape(e.name), e.name, e.name)
  end
  b:put("    { NULL, NULL, 0, NULL },")
  b:put("};")
  b:put("const int tdpy_op_count = %d;", #es)
  return b:text()
end

local function py_string(s)
  return '"""' .. s:gsub("\\", "\\\\"):gsub('"""', '\\"\\"\\"') .. '"""'
end

-- The hand-written part of the module (python/tdispatch_module.c), as the stub shows it.
local STUB_HEAD = [==[
from typing import Any, Sequence

class Error(Exception):
    status: str
class NullError(Error, TypeError): ...
class InvalidError(Error, ValueError): ...
class KindError(Error, TypeError): ...
class DtypeError(Error, TypeError): ...
class ShapeError(Error, ValueError): ...
class RangeError(Error, IndexError): ...
class BackendMismatchError(Error, ValueError): ...
class UnsupportedError(Error, NotImplementedError): ...
class OutOfMemoryError(Error, MemoryError): ...
class AutodiffContextError(Error, RuntimeError): ...
class AutodiffError(Error, RuntimeError): ...
class DeviceError(Error, RuntimeError): ...
class DistributedError(Error, RuntimeError): ...
class InternalError(Error, RuntimeError): ...

class Device:
    backend: str
    index: int
    def __eq__(self, other: object) -> bool: ...

class Group: ...

class Grads:
    def __getitem__(self, t: Tensor) -> Tensor: ...

class Tensor:
    shape: tuple[int, ...]
    ndim: int
    dtype: str
    device: Device
    grad: Tensor | None
    def numel(self) -> int: ...
    def item(self) -> float | int | bool: ...
    def tolist(self) -> Any: ...
    def numpy(self) -> Any: ...
    def require_grad(self) -> Tensor: ...
    def backward(self, retain_graph: bool = False) -> Grads: ...
    def to(self, device: Device) -> Tensor: ...
    def assign(self, value: Tensor) -> Tensor: ...
    def detach(self) -> Tensor: ...
    def value(self) -> Tensor: ...
    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def __add__(self, other: Tensor | float | int) -> Tensor: ...
    def __sub__(self, other: Tensor | float | int) -> Tensor: ...
    def __mul__(self, other: Tensor | float | int) -> Tensor: ...
    def __truediv__(self, other: Tensor | float | int) -> Tensor: ...
    def __matmul__(self, other: Tensor) -> Tensor: ...
    def __pow__(self, other: Tensor | float | int) -> Tensor: ...
    def __neg__(self) -> Tensor: ...
    def __getitem__(self, key: int | slice | tuple[int | slice, ...] | Tensor) -> Tensor: ...
    def __len__(self) -> int: ...

def device(name: str) -> Device: ...
def autodiff(inner: Device, checkpoint: str = "none") -> Device: ...
def devices() -> list[dict[str, Any]]: ...
def tensor(data: Any, device: Device | None = None, dtype: str | None = None) -> Tensor: ...
def from_dlpack(obj: Any) -> Tensor: ...
def group_world() -> Group: ...

class Optimizer:
    def step(self, grads: Grads) -> None: ...
    def set_lr(self, lr: float) -> None: ...

def sgd(params: Sequence[Tensor], lr: float, momentum: float = 0.0, dampening: float = 0.0,
        weight_decay: float = 0.0, nesterov: bool = False) -> Optimizer: ...
def adam(params: Sequence[Tensor], lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
         weight_decay: float = 0.0, decoupled: bool = False) -> Optimizer: ...
]==]

function M.stub(model, specs_note)
  local b = util.buffer()
  banner(b, "Type stub of the tdispatch module's generated op functions (python/tdispatch.pyi adds the rest).",
    specs_note, "#")
  b:raw(STUB_HEAD)
  for _, e in ipairs(entries(model)) do
    local ps = {}
    for _, a in ipairs(py_args(e.args)) do ps[#ps + 1] = a.name .. ": " .. py_type(a) end
    b:put("")
    b:put("def %s(%s) -> %s:", e.name, table.concat(ps, ", "), e.pyret)
    local d = e.doc:match("^.-\n%-%-\n\n(.*)$") or e.doc
    b:put("    %s", py_string(d))
    b:put("    ...")
  end
  return b:text()
end

-- ---- tdispatch_examples.py: the specs' examples as data for the pytest suite ----

-- A Lua value as a Python literal: floats keep their sign and fraction (-0.0 stays -0.0),
-- the float words of the specs ("nan", "inf", "-inf") become NAN / INF / -INF when `float`.
local function py_value(v, float)
  local ty = type(v)
  if ty == "boolean" then return v and "True" or "False" end
  if ty == "number" then
    if math.type(v) == "integer" then return string.format("%d", v) end
    if v ~= v then return "NAN" end
    if v == math.huge then return "INF" end
    if v == -math.huge then return "-INF" end
    local s = string.format("%.17g", v)
    if not s:find("[%.eEn]") then s = s .. ".0" end
    return s
  end
  if ty == "string" then
    if float and v == "nan" then return "NAN" end
    if float and v == "inf" then return "INF" end
    if float and v == "-inf" then return "-INF" end
    return '"' .. v:gsub("\\", "\\\\"):gsub('"', '\\"') .. '"'
  end
  if ty == "table" then
    local parts = {}
    if util.is_array(v) or next(v) == nil then
      for i, x in ipairs(v) do parts[i] = py_value(x, float) end
      return "[" .. table.concat(parts, ", ") .. "]"
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do parts[#parts + 1] = py_value(tostring(k)) .. ": " .. py_value(v[k], float) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  error("emit_python: no Python literal for a " .. ty)
end

-- One argument's description for the test: (name, kind, dtype or None).
local function arg_desc(a)
  local k = kind(a) or "unsupported"
  local dt = a.t.tensor and schema.classes[a.t.tensor] or (a.t.list and schema.classes[a.t.list]) or a.t.host_in
    or a.t.host_out or ((a.type == "f32" or a.type == "i32") and a.type) or nil
  return string.format("(%s, %s, %s)", py_value(a.name), py_value(k), dt and py_value(dt) or "None")
end

-- tdispatch_examples.py: every op and tuple with its arguments (name, kind, dtype), what
-- it returns, the backends that run it, its tolerance and its examples (inputs and
-- expected results as the spec writes them), for tests/python/test_examples.py.
function M.examples(model, specs_note)
  local tuple = require("tdgen.tuple")
  local b = util.buffer()
  banner(b, "The specs' examples (known-value cases) as data for the Python tests (tests/python).", specs_note, "#")
  b:put("# Each entry: family, args ((name, kind, dtype), ...), results ((name, dtype), ...) or")
  b:put("# host (the dtype of the list it returns) or none, backends that run it, tolerance (a float")
  b:put("# within tol * (1 + |want|), NaN where NaN, inf exactly; int and bool exact), examples.")
  b:put("NAN = float(\"nan\")")
  b:put("INF = float(\"inf\")")
  b:put("")
  b:put("OPS = {")
  local function put_entry(name, family, args, results, host, backends, tol, examples, float_of)
    b:put("    %s: {", py_value(name))
    b:put("        \"family\": %s,", py_value(family))
    local ds = {}
    for i, a in ipairs(args) do ds[i] = arg_desc(a) end
    b:put("        \"args\": [%s],", table.concat(ds, ", "))
    local rs = {}
    for i, r in ipairs(results) do rs[i] = string.format("(%s, %s)", py_value(r[1]), py_value(r[2])) end
    b:put("        \"results\": [%s],", table.concat(rs, ", "))
    b:put("        \"host\": %s,", host and py_value(host) or "None")
    b:put("        \"backends\": %s,", py_value(backends))
    b:put("        \"tolerance\": %s,", py_value(tol + 0.0))
    b:put("        \"examples\": [")
    for _, ex in ipairs(examples or {}) do
      local keys = {}
      for k in pairs(ex) do keys[#keys + 1] = k end
      table.sort(keys)
      local parts = {}
      for _, k in ipairs(keys) do parts[#parts + 1] = py_value(k) .. ": " .. py_value(ex[k], float_of(k)) end
      b:put("            {%s},", table.concat(parts, ", "))
    end
    b:put("        ],")
    b:put("    },")
  end
  -- Which example keys hold float values (f32 tensors, f32 host data and scalars).
  local function floats(args, results)
    local f = {}
    for _, a in ipairs(args) do
      if (a.t.tensor and schema.classes[a.t.tensor] == "f32") or (a.t.list and schema.classes[a.t.list] == "f32")
        or a.t.host_in == "f32" or a.type == "f32" then f[a.name] = true end
    end
    for _, r in ipairs(results) do if r[2] == "f32" then f[r[1]] = true end end
    return function(k) return f[k] or false end
  end
  for _, op in ipairs(model.ops) do
    local results, host = {}, nil
    if schema.classes[op.returns] then results[1] = { "out", schema.classes[op.returns] } end
    if op.returns == "host" then
      for _, a in ipairs(op.args) do if a.t.host_out then host = a.t.host_out end end
    end
    local fl = floats(op.args, results)
    local of = fl
    if host then of = function(k) return k == "out" and host == "f32" or fl(k) end end
    local bes = {}
    for _, be in ipairs(model.backends) do if be.runs[op.name] then bes[#bes + 1] = be.name end end
    put_entry(op.name, op.family, op.args, results, host, bes, op.tolerance, op.examples, of)
  end
  for _, t in ipairs(model.tuples or {}) do
    local results = {}
    for i, p in ipairs(t.parts) do results[i] = { p.result, schema.classes[p.class] } end
    local bes = {}
    for _, be in ipairs(model.backends) do if tuple.how(t, be) then bes[#bes + 1] = be.name end end
    put_entry(t.name, "tuple", t.args, results, nil, bes, t.tolerance, t.examples, floats(t.args, results))
  end
  b:put("}")
  return b:text()
end

return M
