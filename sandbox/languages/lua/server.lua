-- passk's server in the candidate's process (installed as /opt/passk/lua/server.lua, loaded with `lua -e` before
-- the model's code, so what it relies on is taken before anything can replace it). The candidate's program is
-- the original program's text up to the tests (the prompt and the model's completion), followed by one statement
-- that passk adds:
--
--     ;PasskServer.serve('name', name)
--
-- so the function is served exactly where the tests would have started in one process, after every top-level
-- statement of the model's code (a `local function` is in scope there). The server reads calls on descriptor 3,
-- calls the function with the arguments rebuilt from data, and answers on descriptor 4: every value it returned
-- ('R' and a tuple), or what it raised ('E' <kind> <message>). When the judge closes its end, serve returns and
-- the program runs on to its end.
--
-- What LuaUnit would catch but Lua cannot go on after, running out of memory, ends this process as the one
-- process's report would end it ("lua: not enough memory"); `os.exit` in the function exits.
--
-- The server is the candidate's own: the model's code may change anything in this process, and so anything the
-- server sends. The judge trusts none of it (judge.lua, values.py).

local wire = dofile('/opt/passk/lua/wire.lua')

local CALLS, REPLIES = 3, 4
local MEMORY = 'not enough memory'
local type, pcall, tostring = type, pcall, tostring
local pack, unpack = table.pack, table.unpack
local stderr, exit = io.stderr, os.exit
local _exit = os.exit

local serving = false

local function describe(problem)
  if type(problem) == 'string' then
    return 'error', problem
  end
  local ok, text = pcall(tostring, problem)
  return 'error object (' .. type(problem) .. ')', ok and type(text) == 'string' and text or ''
end

local function answer(fn, args)
  local results = pack(pcall(fn, unpack(args, 1, args.n)))
  if results[1] then
    return 'R' .. wire.encode_tuple(results, 2, results.n)
  end
  local problem = results[2]
  if problem == MEMORY then
    stderr:write('lua: ', MEMORY, '\n')
    exit(1)
  end
  local kind, text = describe(problem)
  return 'E' .. wire.string(kind) .. wire.string(text)
end

-- The call a message holds: its function's name and its arguments (table.pack's form).
local function call_of(message)
  local reader = wire.reader(message)
  if reader:letter() ~= 'C' then
    wire.malformed('not a call')
  end
  local called = reader:string()
  local count = reader:u32()
  local args = {n = count}
  for i = 1, count do
    args[i] = wire.decode_value(reader, 1)
  end
  reader:finish()
  return called, args
end

PasskServer = {}

-- Serve the function `fn` (the program's `name`) until the judge closes its end.
function PasskServer.serve(name, fn)
  if serving then
    return
  end
  serving = true
  while true do
    local ok, message = pcall(wire.receive, CALLS)
    if not ok then
      _exit(70) -- only the judge writes calls: a call it did not mean is passk's own failure
    end
    if message == nil then
      return
    end
    local parsed, called, args = pcall(call_of, message)
    if not parsed or called ~= name then
      _exit(70)
    end
    if not wire.send(REPLIES, answer(fn, args)) then
      return
    end
  end
end
