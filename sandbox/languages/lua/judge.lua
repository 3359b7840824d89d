-- The judge's runtime for Lua (installed as /opt/passk/lua/judge.lua): the entry point of the judge's process,
-- `lua judge.lua` in the judge's directory. It holds none of the model's code.
--
-- It runs the tests (main.lua: the prompt's code before the function to complete, a stub for that function, the
-- problem's tests, which end with `os.exit(lu.LuaUnit.run())`) and reports PASS on descriptor 3 once LuaUnit ran
-- every test and none failed: the tests' `os.exit` ends them here instead of ending the process. A stub's call
-- sends the arguments to the candidate's process (descriptor 4) and returns the values it answers (descriptor 5),
-- rebuilt from data. How a call ends the tests instead (report.py): the candidate's process ended or closed its
-- channel (ENDED), the function raised (RAISED <kind>: <message>, which the tests cannot catch), it returned a
-- value the wire cannot carry (ERROR), or it sent anything but one well-formed answer (BROKEN). Data the candidate
-- wrote unasked is looked for before each call, before PASS (there it is BROKEN), and as failing tests end (FLAG
-- out_of_turn).
--
-- A failed test is reported as one process reports it: LuaUnit's report on stdout, and here the first fault on
-- stderr ("LuaUnit failure: ..." for a failed assertion, "LuaUnit error: ..." for an error in a test, "lua: ..."
-- for an error of the tests' top-level code), with exit status 1; PID 1 classifies it with the language's stderr
-- patterns.

local wire = dofile('/opt/passk/lua/wire.lua')
local uv = wire.uv

local REPORT, CALLS, REPLIES = 3, 4, 5
-- How long the ending judge waits for the candidate's process to end once its calls are closed (milliseconds).
local SURPLUS_WAIT_MS = 100
local stdout, stderr = io.stdout, io.stderr
local _exit = os.exit -- (the tests' os.exit is replaced below)

-- True if the candidate's process wrote anything no call asked for (one byte of it is consumed). An end of input
-- is not data: the next call sees the candidate gone.
local function unasked(wait_ms)
  if not wire.readable(REPLIES, wait_ms or 0) then
    return false
  end
  local data = uv.fs_read(REPLIES, 1, -1)
  return data ~= nil and #data > 0
end

-- Unasked data, looked for as failing tests end: the calls are closed, so an honest server returns and its process
-- ends (end of input on the replies); whatever arrives before that, or within SURPLUS_WAIT_MS, is unasked.
local function surplus()
  uv.fs_close(CALLS)
  return unasked(SURPLUS_WAIT_MS)
end

local function write_report(text)
  local at = 1
  while at <= #text do
    local written = uv.fs_write(REPORT, text:sub(at), -1)
    if not written then
      return
    end
    at = at + written
  end
end

-- End the tests with `record` as the report (its last line is the outcome: report.py).
local function finish(record)
  stdout:flush()
  write_report((surplus() and 'FLAG out_of_turn\n' or '') .. record)
  _exit(1)
end

local function cannot_compare(name, kind)
  finish('ERROR ' .. name .. '() returned a value of type ' .. kind .. ', which passk cannot compare')
end

local function answer(name, reply)
  local ok, result = pcall(function()
    local reader = wire.reader(reply)
    local kind = reader:letter()
    if kind == 'E' then
      local raised = reader:string() .. ': ' .. reader:string()
      reader:finish()
      return {raised = raised}
    elseif kind == 'U' then
      local unsendable = reader:string()
      reader:finish()
      wire.unsendable(unsendable)
    elseif kind == 'R' then
      local values = wire.decode_tuple(reader)
      reader:finish()
      return {values = values}
    end
    wire.malformed('not an answer')
  end)
  if not ok then
    if wire.is_unsendable(result) then
      cannot_compare(name, result.type)
    elseif wire.is_malformed(result) then
      finish('BROKEN ' .. name .. '(): ' .. result.text)
    end
    error(result, 0)
  end
  if result.raised then
    finish('RAISED ' .. result.raised)
  end
  return table.unpack(result.values, 1, result.values.n)
end

PasskJudge = {}

-- The stubs' call: `name` with the arguments as the tests passed them (table.pack's form).
function PasskJudge.call(name, args)
  if unasked() then
    finish('BROKEN ' .. name .. '(): the program wrote on its channel before the call')
  end
  local parts = {'C', wire.string(name), wire.u32(args.n)}
  for i = 1, args.n do
    local encoded = wire.encode(args[i])
    if encoded:sub(1, 1) == 'X' then
      local kind = wire.reader(encoded:sub(2)):string()
      finish('ERROR the tests pass ' .. name .. '() a value of type ' .. kind .. ', which passk cannot send')
    end
    parts[#parts + 1] = encoded
  end
  if not wire.send(CALLS, table.concat(parts)) then
    finish('ENDED')
  end
  local ok, reply = pcall(wire.receive, REPLIES)
  if not ok then
    if wire.is_malformed(reply) then
      finish('BROKEN ' .. name .. '(): ' .. reply.text)
    end
    error(reply, 0)
  end
  if reply == nil then
    finish('ENDED')
  end
  return answer(name, reply)
end

-- After the tests ended: the only way to a pass. (Only what is there already: waiting for the candidate's process
-- to end would cost every pass its exit.)
local function pass()
  if unasked() then
    finish('BROKEN the program wrote on its channel after its last answer')
  end
  stdout:flush()
  write_report('PASS')
  _exit(0)
end

-- The tests failed: `line` (the first fault) goes to stderr for PID 1's patterns.
local function failed(line)
  stdout:flush()
  local lines, count = {}, 0
  for text in (line .. '\n'):gmatch('([^\n]*)\n') do
    count = count + 1
    if count > 20 then
      break
    end
    lines[count] = text
  end
  stderr:write(table.concat(lines, '\n'), '\n')
  stderr:flush()
  if surplus() then
    write_report('FLAG out_of_turn\n')
  end
  _exit(1)
end

-- LuaUnit's result of the tests' run, kept as the runner ends.
local lu = require('luaunit')
local outcome
local run_suite = lu.LuaUnit.runSuite
lu.LuaUnit.runSuite = function(self, ...)
  local results = table.pack(run_suite(self, ...))
  outcome = self.result
  return table.unpack(results, 1, results.n)
end

local function first_fault()
  for _, node in ipairs(outcome and outcome.allTests or {}) do
    if node.status == lu.NodeStatus.FAIL then
      return 'LuaUnit failure: ' .. tostring(node.msg)
    elseif node.status == lu.NodeStatus.ERROR then
      return 'LuaUnit error: ' .. tostring(node.msg)
    end
  end
  return 'passk: the tests did not pass'
end

-- The tests' os.exit ends the tests, not the process.
local EXIT = {}
os.exit = function(code)
  error(setmetatable({code = code}, EXIT), 0)
end

local chunk, problem = loadfile('main.lua')
if not chunk then
  failed('lua: ' .. tostring(problem))
end
local ok, ending = xpcall(chunk, function(raised)
  if getmetatable(raised) == EXIT then
    return raised
  end
  return debug.traceback(tostring(raised), 2)
end)
if not ok and getmetatable(ending) ~= EXIT then
  failed('lua: ' .. tostring(ending))
end
local code = ok and 0 or ending.code
if code == nil or code == true or code == 0 then
  pass()
end
failed(first_fault())
