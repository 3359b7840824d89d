-- The value wire (sandbox/runtime/values.py has the rule) in Lua: framing on descriptors and the codec.
-- Installed in the Lua image as /opt/passk/lua/wire.lua; loaded (dofile) by the judge (judge.lua) and by passk's
-- server in the candidate's process (server.lua). Standard Lua cannot touch a descriptor other than 0-2, so the
-- framing reads and writes through luv (libuv's bindings, Debian's `lua-luv`: its file calls without a callback
-- are plain read(2) and write(2) on the descriptor); Debian's luaposix stops at Lua 5.3.
--
-- Lua's values and how each crosses, one canonical form each (equal values, equal bytes):
--   nil n, false F, true T, an integer l (Lua 5.4's are 64 bits), a float d (binary64: -0.0, NaN payloads and the
--   infinities keep), a string s (its bytes), and a table:
--   - a sequence (its keys exactly 1..n; the empty table too) as A, its items in order;
--   - any other table as M, its pairs in one order: booleans (false first), then numbers (by value), then strings
--     (by bytes). Its keys must be booleans, numbers or strings.
--   A table crosses as its own contents (read raw: no metamethod runs); a metatable never crosses, so the tests
--   compare with their own equality, which sees only the contents.
-- A function, userdata or thread, a table keyed by a table (or any other value), a table that holds itself and a
-- value nested too deeply cannot be rebuilt faithfully: the whole value crosses as X with its type, and the
-- judge fails the sample as an error. A receiver refuses any other tag, and any byte that is not exactly one
-- well-formed value in its one canonical form (Malformed): a nil inside A (a table with holes crosses as M), an
-- empty M or one whose keys are 1..n (those are A), keys out of order or twice, a nil value, a NaN key, a float
-- key Lua would store as an integer.
--
-- The candidate's answer is a tuple: a Lua function returns any number of values, and the tests see them all.
--
-- Only data crosses: the receiver builds fresh values from bytes and never calls anything of the sender's. In the
-- candidate's process the model's code runs after this file is loaded; what the codec uses is taken here, as it
-- loads.

local uv = require('luv')

local type, next, rawget, error, pcall, setmetatable, getmetatable = type, next, rawget, error, pcall, setmetatable, getmetatable
local mathtype, tointeger, min = math.type, math.tointeger, math.min
local pack, unpack, sub, concat, sort = string.pack, string.unpack, string.sub, table.concat, table.sort
local read, write = uv.fs_read, uv.fs_write

-- A write on a pipe whose reader is gone fails with EPIPE instead of killing the process: SIGPIPE has a handler
-- (which only a running loop would call).
local wire = {}
local sigpipe = uv.new_signal()
sigpipe:start('sigpipe', function() end)
wire.uv = uv

wire.MAX_DEPTH = 100
wire.MAX_MESSAGE = 1 << 30
local MAX_DEPTH = wire.MAX_DEPTH
local READ_CHUNK = 1 << 20

local MALFORMED, UNSENDABLE = {}, {}

-- Bytes that are not a well-formed value (or message).
function wire.malformed(text)
  error(setmetatable({text = text}, MALFORMED), 0)
end

-- A value the wire cannot carry; `kind` names it (values.py's X).
function wire.unsendable(kind)
  error(setmetatable({type = kind}, UNSENDABLE), 0)
end

function wire.is_malformed(problem)
  return type(problem) == 'table' and getmetatable(problem) == MALFORMED
end

function wire.is_unsendable(problem)
  return type(problem) == 'table' and getmetatable(problem) == UNSENDABLE
end

local malformed, unsendable = wire.malformed, wire.unsendable

-- ------------------------------------------------------------------ bytes out

function wire.u32(value)
  return pack('>I4', value)
end

function wire.string(bytes)
  return pack('>s4', bytes)
end

local u32, str = wire.u32, wire.string

-- The order of a table's keys on the wire.
local RANK = {boolean = 1, number = 2, string = 3}

local function before(a, b)
  local rank_a, rank_b = RANK[type(a)], RANK[type(b)]
  if rank_a ~= rank_b then
    return rank_a < rank_b
  end
  if rank_a == 1 then
    return not a and b
  end
  return a < b
end

local encode_value

local function encode_table(out, value, depth, seen)
  if seen[value] then
    unsendable('deeply nested value')
  end
  seen[value] = true
  local keys, count, sequence = {}, 0, true
  local key = next(value)
  while key ~= nil do
    count = count + 1
    keys[count] = key
    key = next(value, key)
  end
  for i = 1, count do
    local k = keys[i]
    if not (mathtype(k) == 'integer' and k >= 1 and k <= count) then
      sequence = false
      break
    end
  end
  if sequence then
    out[#out + 1] = 'A' .. u32(count)
    for i = 1, count do
      encode_value(out, rawget(value, i), depth + 1, seen)
    end
  else
    for i = 1, count do
      if not RANK[type(keys[i])] then
        unsendable('a table keyed by a ' .. type(keys[i]))
      end
    end
    sort(keys, before)
    out[#out + 1] = 'M' .. u32(count)
    for i = 1, count do
      encode_value(out, keys[i], depth + 1, seen)
      encode_value(out, rawget(value, keys[i]), depth + 1, seen)
    end
  end
  seen[value] = nil
end

encode_value = function(out, value, depth, seen)
  if depth > MAX_DEPTH then
    unsendable('deeply nested value')
  end
  local kind = type(value)
  if kind == 'nil' then
    out[#out + 1] = 'n'
  elseif kind == 'boolean' then
    out[#out + 1] = value and 'T' or 'F'
  elseif kind == 'number' then
    if mathtype(value) == 'integer' then
      out[#out + 1] = 'l' .. pack('>i8', value)
    else
      out[#out + 1] = 'd' .. pack('>d', value)
    end
  elseif kind == 'string' then
    out[#out + 1] = 's' .. str(value)
  elseif kind == 'table' then
    encode_table(out, value, depth, seen)
  else
    unsendable(kind)
  end
end

local function unsendable_bytes(problem)
  return 'X' .. str(problem.type)
end

-- The bytes of `value`: itself, or X with the type of what cannot cross (the whole value).
function wire.encode(value)
  local out = {}
  local ok, problem = pcall(encode_value, out, value, 0, {})
  if ok then
    return concat(out)
  end
  if wire.is_unsendable(problem) then
    return unsendable_bytes(problem)
  end
  error(problem, 0)
end

-- The bytes of values first..last of `values` as a tuple (P), or X for the whole if one cannot cross.
function wire.encode_tuple(values, first, last)
  local out = {'P' .. u32(last - first + 1)}
  local ok, problem = pcall(function()
    for i = first, last do
      encode_value(out, values[i], 1, {})
    end
  end)
  if ok then
    return concat(out)
  end
  if wire.is_unsendable(problem) then
    return unsendable_bytes(problem)
  end
  error(problem, 0)
end

-- ------------------------------------------------------------------ bytes in

-- A message being read: its bytes and a position.
local Reader = {}
Reader.__index = Reader

function wire.reader(data)
  return setmetatable({data = data, at = 1}, Reader)
end

function Reader:take(size)
  if size < 0 or self.at + size - 1 > #self.data then
    malformed('truncated')
  end
  local chunk = sub(self.data, self.at, self.at + size - 1)
  self.at = self.at + size
  return chunk
end

function Reader:letter()
  return self:take(1)
end

function Reader:u32()
  return (unpack('>I4', self:take(4)))
end

function Reader:string()
  return self:take(self:u32())
end

function Reader:finish()
  if self.at ~= #self.data + 1 then
    malformed('trailing bytes')
  end
end

local decode_value

local function decode_map(reader, depth)
  local count = reader:u32()
  if count == 0 then
    malformed('an empty table crosses as A')
  end
  local map, last, sequence = {}, nil, true
  for _ = 1, count do
    local key = decode_value(reader, depth + 1)
    if not RANK[type(key)] then
      malformed('a table key Lua does not rebuild')
    end
    if key ~= key then
      malformed('a NaN key')
    end
    if mathtype(key) == 'float' and tointeger(key) then
      malformed('a float key Lua stores as an integer')
    end
    if last ~= nil and not before(last, key) then
      malformed('table keys out of order or twice')
    end
    local item = decode_value(reader, depth + 1)
    if item == nil then
      malformed('a nil value in a table')
    end
    map[key] = item
    last = key
    if not (mathtype(key) == 'integer' and key >= 1 and key <= count) then
      sequence = false
    end
  end
  if sequence then
    malformed('a sequence crosses as A')
  end
  return map
end

-- A value rebuilt from `reader`: Unsendable for X (a value the sender could not carry), Malformed for anything
-- that is not one well-formed value of a type Lua rebuilds.
decode_value = function(reader, depth)
  if depth > MAX_DEPTH then
    malformed('nested too deeply')
  end
  local tag = reader:letter()
  if tag == 'n' then
    return nil
  elseif tag == 'T' then
    return true
  elseif tag == 'F' then
    return false
  elseif tag == 'l' then
    return (unpack('>i8', reader:take(8)))
  elseif tag == 'd' then
    return (unpack('>d', reader:take(8)))
  elseif tag == 's' then
    return reader:string()
  elseif tag == 'A' then
    -- Item by item: a count alone never makes the reader allocate it.
    local count, list = reader:u32(), {}
    for i = 1, count do
      local item = decode_value(reader, depth + 1)
      if item == nil then
        malformed('a nil in a sequence (a table with holes crosses as M)')
      end
      list[i] = item
    end
    return list
  elseif tag == 'M' then
    return decode_map(reader, depth)
  elseif tag == 'X' then
    unsendable(reader:string())
  end
  malformed('a tag Lua does not read: ' .. string.format('%q', tag))
end

wire.decode_value = decode_value

-- The one value `data` holds.
function wire.decode(data)
  local reader = wire.reader(data)
  local value = decode_value(reader, 0)
  reader:finish()
  return value
end

-- A tuple of values (an answer's), as table.pack makes it (its `n` counts trailing nils); X: Unsendable.
function wire.decode_tuple(reader)
  local tag = reader:letter()
  if tag == 'X' then
    unsendable(reader:string())
  end
  if tag ~= 'P' then
    malformed('not a tuple of values')
  end
  local count = reader:u32()
  local values = {n = 0}
  for i = 1, count do
    values[i] = decode_value(reader, 1)
    values.n = i
  end
  return values
end

-- ------------------------------------------------------------------ framing

-- Whether descriptor `fd` has data or an end of input: waits `wait_ms` milliseconds (0: not at all, nil: until
-- it has). Polling leaves the descriptor non-blocking (libuv's way), so reads wait here when it has nothing.
function wire.readable(fd, wait_ms)
  local ready = false
  local poll = uv.new_poll(fd)
  poll:start('r', function()
    ready = true
    poll:stop()
  end)
  local timer
  if wait_ms == 0 then
    uv.run('nowait')
  else
    if wait_ms then
      timer = uv.new_timer()
      timer:start(wait_ms, 0, function() end)
    end
    uv.run('once')
  end
  if timer then
    timer:close()
  end
  poll:close()
  uv.run('nowait')
  return ready
end

-- Exactly `size` bytes from descriptor `fd`; nil at a clean end of input before the first byte, Malformed if cut.
local function read_exactly(fd, size, clean_end)
  local parts, got = {}, 0
  while got < size do
    local chunk, text, name = read(fd, min(size - got, READ_CHUNK), -1)
    if chunk == nil then
      if name == 'EAGAIN' then
        wire.readable(fd)
      elseif name ~= 'EINTR' then
        malformed('a read failed: ' .. tostring(text))
      end
    elseif #chunk == 0 then
      if clean_end and got == 0 then
        return nil
      end
      malformed('a message cut short')
    else
      parts[#parts + 1] = chunk
      got = got + #chunk
    end
  end
  return concat(parts)
end

-- The next framed message on descriptor `fd`, or nil at a clean end of input before it.
function wire.receive(fd)
  local header = read_exactly(fd, 4, true)
  if header == nil then
    return nil
  end
  local size = unpack('>I4', header)
  if size > wire.MAX_MESSAGE then
    malformed('a message over 1 GiB')
  end
  if size == 0 then
    return ''
  end
  return read_exactly(fd, size, false)
end

-- Writes `message` framed on descriptor `fd`; false if the other side is gone.
function wire.send(fd, message)
  local framed = u32(#message) .. message
  local at = 1
  while at <= #framed do
    local written, _, name = write(fd, at == 1 and framed or sub(framed, at), -1)
    if written then
      at = at + written
    elseif name ~= 'EINTR' and name ~= 'EAGAIN' then
      return false -- EPIPE: the other side is gone
    end
  end
  return true
end

return wire
