# passk's server in the candidate's process (compiled into the Elixir image under /opt/passk/elixir/ebin, on the
# candidate's code path). The candidate's program is the original program's text up to the tests (the prompt and
# the model's completion, which closes the function and its module), followed by one statement that passk adds:
#
#     PasskServer.serve(HumanEval, :name)
#
# so the function is served exactly where the tests would have started in one program, after every top-level
# expression of the model's code. The server reads calls on descriptor 3, calls the function with the arguments
# rebuilt from data, and answers on descriptor 4: the value it returned ('R'), or what it raised or threw ('E'
# <kind> <message>). When the judge closes its end, serve returns and the program runs on to its end.
#
# The function runs in the script's own process, as the tests would call it in one program: `System.halt` in it
# ends the process, and so does a heap over the runtime's limit (+hmax: the process is killed, the runtime exits).
#
# The server is the candidate's own: the model's code may redefine this module, and so anything it sends. The judge
# trusts none of it (judge.ex, values.py).
defmodule PasskServer do
  @calls 3
  @replies 4

  def serve(module, name) do
    port = Port.open({:fd, @calls, @replies}, [:binary, :stream, :eof])

    try do
      loop(port, module, name, "")
    rescue
      # Only the judge writes calls: a call it did not mean is passk's own failure.
      _ in [PasskWire.Malformed, PasskWire.Unsendable] -> System.halt(70)
    end
  end

  defp loop(port, module, name, buffer) do
    case PasskWire.unframe(buffer) do
      {:ok, message, rest} ->
        Port.command(port, PasskWire.frame(answer(module, name, message)))
        loop(port, module, name, rest)

      :more ->
        receive do
          {^port, {:data, data}} -> loop(port, module, name, buffer <> data)
          {^port, :eof} -> :ok
        end
    end
  end

  defp answer(module, name, message) do
    {args, called} = call(message)
    if called != Atom.to_string(name), do: PasskWire.malformed("a call of #{called}, which is not served")

    try do
      ["R", PasskWire.encode(apply(module, name, args))]
    rescue
      error -> raised(inspect(error.__struct__), message(error))
    catch
      :throw, value -> raised("throw", inspect(value))
      :exit, reason -> raised("exit", inspect(reason))
    end
  end

  defp call(<<?C, rest::binary>>) do
    {called, rest} = PasskWire.read_string(rest)
    {count, rest} = PasskWire.read_u32(rest)
    {args, rest} = read_args(rest, count, [])
    if rest != "", do: PasskWire.malformed("trailing bytes")
    {args, called}
  end

  defp call(_message), do: PasskWire.malformed("not a call")

  defp read_args(data, 0, args), do: {Enum.reverse(args), data}

  defp read_args(data, count, args) do
    {arg, rest} = PasskWire.decode_value(data, 1)
    read_args(rest, count - 1, [arg | args])
  end

  defp message(error) do
    Exception.message(error)
  rescue
    _ -> ""
  end

  defp raised(kind, text), do: ["E", PasskWire.string(kind), PasskWire.string(text)]
end
