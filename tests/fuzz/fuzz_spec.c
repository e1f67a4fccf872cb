/* libFuzzer harness of the spec loader and validator: each input is spec text run through
 * gen/tdgen's load, validate and (when the specs are valid) emit modules, in memory.
 *
 * The generator promises that a bad spec gives collected "file:line: message" errors, in
 * bounded time and memory, and the same output on every run. So any of these is a crash
 * (abort): a Lua error escaping the generator (a traceback), a message that does not start
 * with the file and a line inside it, two runs of one input that differ (unless a time or
 * memory bound stopped a spec: where it stops may depend on the clock and the collector),
 * and a Lua state growing past MEMORY_CAP. Build and run: tests/fuzz/spec.cmake.
 *
 * Input format: sections, each starting with a line "--%% backends" or "--%% ops" (a Lua
 * comment), become the files fuzz/backends/N.lua and fuzz/ops/N.lua; an input that does
 * not start with "--%% " is one file, of ops when its first byte is even, else of
 * backends, holding the rest of the input. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#ifndef TD_GEN_DIR
#error "define TD_GEN_DIR as the path of the repository's gen/ folder"
#endif

/* The whole Lua state; a spec run alone is held to 16 MiB (LIMITS below). */
#define MEMORY_CAP ((size_t)512 << 20)

/* Line coverage of the generator's Lua code, as libFuzzer extra counters: libFuzzer sees
 * only C coverage, and the interesting branches are Lua lines. */
#define COVERAGE_SLOTS (1u << 16)
__attribute__((used, section("__libfuzzer_extra_counters"))) static uint8_t lua_coverage[COVERAGE_SLOTS];

static const char driver[] =
    "local load = require('tdgen.load')\n"
    "local validate = require('tdgen.validate')\n"
    "local emit_c = require('tdgen.emit_c')\n"
    "local emit_support = require('tdgen.emit_support')\n"
    "local emit_tests = require('tdgen.emit_tests')\n"
    "local emit_fuzz = require('tdgen.emit_fuzz')\n"
    "\n"
    "-- Smaller bounds than the command line's, so that each input runs quickly.\n"
    "local LIMITS = { bytes = 1024 * 1024, instructions = 200000, memory = 16 * 1024 * 1024, seconds = 5 }\n"
    "local MAX_FILES = 16\n"
    "local MARK = '--%% '\n"
    "\n"
    "local function files_of(data)\n"
    "  local files = {}\n"
    "  if data:sub(1, #MARK) ~= MARK then\n"
    "    files[1] = { kind = (data:byte(1) or 0) % 2 == 0 and 'ops' or 'backends', text = data:sub(2) }\n"
    "    return files\n"
    "  end\n"
    "  local pos = 1\n"
    "  while pos <= #data and #files < MAX_FILES do\n"
    "    local eol = data:find('\\n', pos, true) or #data + 1\n"
    "    local kind = data:sub(pos + #MARK, pos + #MARK + 7) == 'backends' and 'backends' or 'ops'\n"
    "    local next_mark = data:find('\\n' .. MARK, eol, true)\n"
    "    files[#files + 1] = { kind = kind, text = data:sub(eol + 1, next_mark or #data) }\n"
    "    pos = next_mark and next_mark + 1 or #data + 1\n"
    "  end\n"
    "  return files\n"
    "end\n"
    "\n"
    "-- Every message starts with one of the files and a line inside it, and is one line.\n"
    "local function check_messages(msgs, lines)\n"
    "  for _, m in ipairs(msgs) do\n"
    "    if type(m) ~= 'string' then error('a message that is a ' .. type(m), 0) end\n"
    "    local file, line = m:match('^(fuzz/%a+/%d+%.lua):(%d+): ')\n"
    "    if not file or not lines[file] then error('a message without file:line: ' .. m, 0) end\n"
    "    line = tonumber(line)\n"
    "    if line < 1 or line > lines[file] then\n"
    "      error(string.format('a message naming line %d of a file of %d lines: %s', line, lines[file], m), 0)\n"
    "    end\n"
    "    if m:find('[\\n\\r]') then error('a message of several lines: ' .. m, 0) end\n"
    "  end\n"
    "end\n"
    "\n"
    "-- Load, validate and emit, like gen/tdgen.lua; returns everything produced, as text.\n"
    "local function run(data)\n"
    "  local entries, errors, lines = {}, {}, {}\n"
    "  for i, f in ipairs(files_of(data)) do\n"
    "    local name = string.format('fuzz/%s/%d.lua', f.kind, i)\n"
    "    lines[name] = select(2, f.text:gsub('[\\n\\r]', '')) + 1\n"
    "    local es, errs = load.load_text(f.text, name, f.kind == 'ops' and 'op' or 'backend', LIMITS)\n"
    "    for _, e in ipairs(es) do entries[#entries + 1] = e end\n"
    "    for _, e in ipairs(errs) do errors[#errors + 1] = e end\n"
    "  end\n"
    "  local out = {}\n"
    "  if #errors == 0 then\n"
    "    local model, verrs = validate.validate(entries)\n"
    "    for _, e in ipairs(verrs) do errors[#errors + 1] = e end\n"
    "    if #errors == 0 and #model.ops > 0 and #model.backends > 0 then\n"
    "      local note = 'fuzz input'\n"
    "      out[#out + 1] = emit_c.kinds_header(model, note)\n"
    "      out[#out + 1] = emit_c.ops_header(model, note)\n"
    "      out[#out + 1] = emit_c.dispatch_source(model, note)\n"
    "      out[#out + 1] = emit_support.support(model, note)\n"
    "      out[#out + 1] = emit_fuzz.kinds_header(model, note)\n"
    "      out[#out + 1] = emit_fuzz.fuzz_table(model, note)\n"
    "      for _, be in ipairs(model.backends) do\n"
    "        out[#out + 1] = emit_c.backend_header(model, be, note)\n"
    "        out[#out + 1] = emit_c.backend_table(model, be, note)\n"
    "        out[#out + 1] = emit_tests.ops_tests(model, be, note)\n"
    "        out[#out + 1] = emit_tests.autodiff_tests(model, be, note)\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "  check_messages(errors, lines)\n"
    "  return table.concat(errors, '\\n') .. '\\n' .. table.concat(out)\n"
    "end\n"
    "\n"
    "-- Where a bound stopped a spec, the place can depend on the clock and the collector.\n"
    "local function bounded(out)\n"
    "  return out:find('ran too long', 1, true) or out:find('uses too much memory', 1, true)\n"
    "end\n"
    "\n"
    "return function(data)\n"
    "  local first, second = run(data), run(data)\n"
    "  if first ~= second and not (bounded(first) or bounded(second)) then\n"
    "    error('two runs of one input differ:\\n' .. first:sub(1, 2000) .. '\\n---\\n' .. second:sub(1, 2000), 0)\n"
    "  end\n"
    "end\n";

static size_t heap_used;

static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    size_t old = ptr != NULL ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        heap_used -= old;
        return NULL;
    }
    if (nsize > old && heap_used - old + nsize > MEMORY_CAP) {
        fprintf(stderr, "fuzz_spec: the Lua state grew past %zu MiB: memory is not bounded\n", MEMORY_CAP >> 20);
        abort();
    }
    void *p = realloc(ptr, nsize);
    if (p != NULL)
        heap_used = heap_used - old + nsize;
    return p;
}

static void coverage_hook(lua_State *L, lua_Debug *ar)
{
    static uintptr_t prev;
    if (lua_getinfo(L, "S", ar) == 0)
        return;
    uintptr_t here = ((uintptr_t)ar->source * 31u) ^ ((uintptr_t)ar->currentline * 2654435761u);
    uint8_t *slot = &lua_coverage[(here ^ prev) & (COVERAGE_SLOTS - 1)];
    if (*slot < 255)
        (*slot)++;
    prev = here >> 1;
}

static int traceback(lua_State *L)
{
    luaL_traceback(L, L, lua_tostring(L, 1), 1);
    return 1;
}

static lua_State *state;

static lua_State *open_state(void)
{
    lua_State *L = lua_newstate(capped_alloc, NULL);
    if (L == NULL)
        abort();
    luaL_openlibs(L);
    lua_pushcfunction(L, traceback);
    if (luaL_loadstring(L, "package.path = ... .. '/?.lua;' .. package.path") != LUA_OK ||
        (lua_pushstring(L, TD_GEN_DIR), lua_pcall(L, 1, 0, 1)) != LUA_OK ||
        luaL_loadbuffer(L, driver, sizeof driver - 1, "=fuzz_spec") != LUA_OK ||
        lua_pcall(L, 0, 1, 1) != LUA_OK) {
        fprintf(stderr, "fuzz_spec: cannot load the generator from %s: %s\n", TD_GEN_DIR, lua_tostring(L, -1));
        abort();
    }
    /* Stack: traceback, the driver's function. */
    lua_sethook(L, coverage_hook, LUA_MASKLINE, 0);
    return L;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (state == NULL)
        state = open_state();
    lua_State *L = state;
    lua_pushvalue(L, 2);
    lua_pushlstring(L, (const char *)data, size);
    if (lua_pcall(L, 1, 0, 1) != LUA_OK) {
        fprintf(stderr, "fuzz_spec: a Lua error escaped the generator:\n%s\n", lua_tostring(L, -1));
        abort();
    }
    lua_gc(L, LUA_GCCOLLECT, 0);
    return 0;
}
