# The judge's runtime for Elixir (compiled into the Elixir image under /opt/passk/elixir/ebin): the judge's process
# is `elixir -e PasskJudge.main` in the judge's directory. It holds none of the model's code.
#
# It loads the tests (main.exs: the prompt's code before the function to complete, a stub for that function, the
# closing `end` of the prompt's module, then the problem's tests) with ExUnit's run at exit turned off, runs ExUnit
# itself, and reports PASS on descriptor 3 once every test ran and passed. A stub's call goes through one process,
# the channel, which holds the calls (descriptor 4) and the replies (descriptor 5) as one port and the report as a
# file: it sends the arguments and answers the value the candidate's process returned, rebuilt from data. How a
# call ends the tests instead (report.py): the candidate's process ended or closed its channel (ENDED), the function
# raised or threw (RAISED <kind>: <message>, which the tests cannot rescue), it returned a value the wire cannot
# carry (ERROR), or it sent anything but one well-formed answer (BROKEN). Data the candidate wrote unasked is looked
# for before each call, before PASS (there it is BROKEN), and as failing tests end (FLAG out_of_turn).
#
# A failed test is reported as one process reports it: ExUnit's report on stdout, and here the first failure on
# stderr (`ExUnit.AssertionError: ...` for a failed assertion, `<exception>: <message>` for an error in the tests),
# with exit status 1; PID 1 classifies it with the language's stderr patterns.
defmodule PasskJudge do
  @report ~c"/dev/fd/3"
  @calls 4
  @replies 5
  # How long the ending judge waits for unasked data once its tests failed.
  @surplus_wait_ms 100

  def main do
    channel = spawn(&channel/0)
    Process.register(channel, __MODULE__)
    ExUnit.start(autorun: false, formatters: [ExUnit.CLIFormatter, PasskJudge.Formatter])

    outcome =
      try do
        Code.require_file("main.exs", File.cwd!())
        ExUnit.run()
      rescue
        error -> {:error, "#{inspect(error.__struct__)}: #{message(error)}"}
      catch
        kind, reason -> {:error, "#{kind}: #{inspect(reason)}"}
      end

    case outcome do
      %{failures: 0, total: total} when total > 0 ->
        ask(:pass)

      %{} ->
        ask(:failed)

      {:error, line} ->
        IO.write(:stderr, line <> "\n")
        ask(:failed)
    end
  end

  def message(error) do
    Exception.message(error)
  rescue
    _ -> ""
  end

  # The stubs' call: `name` with the arguments as the tests passed them.
  def call(name, args), do: ask({:call, name, args})

  defp ask(request) do
    send(__MODULE__, {request, self()})

    receive do
      {:answer, value} -> value
    end
  end

  # ------------------------------------------------------------------ the channel

  defp channel do
    Process.flag(:trap_exit, true)
    {:ok, report} = :file.open(@report, [:write, :raw, :binary])
    port = Port.open({:fd, @replies, @calls}, [:binary, :stream, :eof])
    serve(%{report: report, port: port, buffer: "", ended: false})
  end

  defp serve(state) do
    receive do
      {{:call, name, args}, caller} ->
        state = drain(state)
        if state.buffer != "", do: finish(state, "BROKEN #{name}(): the program wrote on its channel before the call")
        if state.ended, do: finish(state, "ENDED")
        {value, state} = call(state, name, args)
        send(caller, {:answer, value})
        serve(state)

      {:pass, _caller} ->
        state = drain(state)
        if state.buffer != "", do: finish(state, "BROKEN the program wrote on its channel after its last answer")
        :ok = :file.write(state.report, "PASS")
        System.halt(0)

      {:failed, _caller} ->
        if surplus?(state), do: :file.write(state.report, "FLAG out_of_turn\n")
        System.halt(1)
    end
  end

  defp call(state, name, args) do
    message =
      Enum.reduce(args, ["C", PasskWire.string(name), PasskWire.u32(length(args))], fn arg, message ->
        case PasskWire.encode(arg) do
          <<?X, rest::binary>> ->
            {type, _} = PasskWire.read_string(rest)
            finish(state, "ERROR the tests pass #{name}() a value of type #{type}, which passk cannot send")

          encoded ->
            [message, encoded]
        end
      end)

    Port.command(state.port, PasskWire.frame(message))
    {reply, state} = receive_message(state, name)
    {answer(state, name, reply), state}
  rescue
    ArgumentError -> finish(state, "ENDED")
  end

  defp receive_message(state, name) do
    case PasskWire.unframe(state.buffer) do
      {:ok, message, rest} ->
        {message, %{state | buffer: rest}}

      :more ->
        if state.ended do
          finish(state, if(state.buffer == "", do: "ENDED", else: "BROKEN #{name}(): a message cut short"))
        end

        receive_message(next(state, :infinity), name)
    end
  rescue
    error in PasskWire.Malformed -> finish(state, "BROKEN #{name}(): #{error.message}")
  end

  defp answer(state, name, reply) do
    case reply do
      <<?E, rest::binary>> ->
        {kind, rest} = PasskWire.read_string(rest)
        {text, rest} = PasskWire.read_string(rest)
        if rest != "", do: PasskWire.malformed("trailing bytes")
        finish(state, "RAISED #{PasskWire.scrub(kind)}: #{PasskWire.scrub(text)}")

      <<?U, rest::binary>> ->
        {type, rest} = PasskWire.read_string(rest)
        if rest != "", do: PasskWire.malformed("trailing bytes")
        cannot_compare(state, name, PasskWire.scrub(type))

      <<?R, rest::binary>> ->
        PasskWire.decode(rest)

      _ ->
        PasskWire.malformed("not an answer")
    end
  rescue
    error in PasskWire.Unsendable -> cannot_compare(state, name, error.type)
    error in PasskWire.Malformed -> finish(state, "BROKEN #{name}(): #{error.message}")
  end

  defp cannot_compare(state, name, type) do
    finish(state, "ERROR #{name}() returned a value of type #{type}, which passk cannot compare")
  end

  # The next event of the replies within `timeout` (data, their end, or the port gone), or the state as it was.
  defp next(state, timeout) do
    port = state.port

    receive do
      {^port, {:data, data}} -> %{state | buffer: state.buffer <> data}
      {^port, :eof} -> %{state | ended: true}
      {:EXIT, ^port, _reason} -> %{state | ended: true}
    after
      timeout -> state
    end
  end

  # Whatever has arrived already (only what is there: waiting would cost every pass its exit).
  defp drain(state) do
    case next(state, 0) do
      ^state -> state
      newer -> drain(newer)
    end
  end

  # Unasked data, looked for as failing tests end: whatever is there or arrives within @surplus_wait_ms.
  defp surplus?(state) do
    state = drain(state)
    state.buffer != "" or (not state.ended and next(state, @surplus_wait_ms).buffer != "")
  end

  # End the tests with `record` as the report (its last line is the outcome: report.py).
  defp finish(state, record) do
    if surplus?(state), do: :file.write(state.report, "FLAG out_of_turn\n")
    :file.write(state.report, record)
    System.halt(1)
  end
end

defmodule PasskJudge.Formatter do
  # The first failed test's fault on stderr, one line for PID 1's patterns (ExUnit's own report is on stdout).
  use GenServer

  @impl true
  def init(_options), do: {:ok, false}

  @impl true
  def handle_cast({:test_finished, %ExUnit.Test{state: {:failed, [{kind, reason, stack} | _]}}}, false) do
    IO.write(:stderr, line(kind, reason, stack) <> "\n")
    {:noreply, true}
  end

  def handle_cast(_event, state), do: {:noreply, state}

  defp line(:error, %ExUnit.AssertionError{} = error, _stack) do
    "ExUnit.AssertionError: #{error.message} (left: #{inspect(error.left, limit: 20)}, right: #{inspect(error.right, limit: 20)})"
  end

  defp line(:error, reason, stack) do
    error = Exception.normalize(:error, reason, stack)
    "#{inspect(error.__struct__)}: #{PasskJudge.message(error)}"
  end

  defp line(kind, reason, _stack), do: "#{inspect(kind)}: #{inspect(reason, limit: 20)}"
end
