# The value wire (sandbox/runtime/values.py has the rule) in Elixir: the codec and the framing of messages.
# Compiled into the Elixir image under /opt/passk/elixir/ebin; used by the judge (judge.ex) and by passk's server
# in the candidate's process (server.ex).
#
# Elixir's values are dynamic, so every value crosses with its own type and is rebuilt as exactly that:
#   nil n, false F, true T, an integer z (any size), a float d (binary64), a binary s (its bytes, valid UTF-8 or
#   not), a proper list A, a tuple P, a map M (pairs in the map's own order; a struct is the map it is, with its
#   `__struct__` key), any other atom `a "Atom"` with its name as s.
# Anything else (a function, a pid, a reference, a port, a bitstring that is not a binary, an improper list, a value
# nested deeper than MAX_DEPTH) crosses as X with its kind, and the judge fails the sample as an error. A receiver
# refuses any other tag, and any byte that is not exactly one well-formed value in its one canonical form.
#
# Only data crosses: the receiver builds fresh terms from bytes. Comparing them (`==`, pattern matching) runs no
# code of the sender's, and a struct whose module the receiver lacks is still the map it is.
defmodule PasskWire do
  @max_depth 100
  @max_message 1_073_741_824
  @max_atom 255

  defmodule Malformed do
    defexception [:message]
  end

  defmodule Unsendable do
    defexception [:type]

    @impl true
    def message(%{type: type}), do: "a value of type #{type}"
  end

  # ------------------------------------------------------------------ bytes out

  def u32(value), do: <<value::unsigned-big-32>>

  def string(bytes), do: [u32(byte_size(bytes)), bytes]

  # Two's complement, big-endian, in the fewest bytes that hold the value and its sign (values.py's `z`).
  def integer_bytes(0), do: u32(0)

  def integer_bytes(value) do
    size = div(bit_length(abs(value)) + 8, 8)
    [u32(size), <<value::signed-big-size(size * 8)>>]
  end

  defp bit_length(value) do
    <<first, _::binary>> = bytes = :binary.encode_unsigned(value)
    (byte_size(bytes) - 1) * 8 + length(Integer.digits(first, 2))
  end

  # The bytes of `value` as iodata, or Unsendable.
  def encode_value(_value, depth) when depth > @max_depth, do: raise(Unsendable, type: "deeply nested value")
  def encode_value(nil, _depth), do: "n"
  def encode_value(true, _depth), do: "T"
  def encode_value(false, _depth), do: "F"
  def encode_value(value, _depth) when is_integer(value), do: ["z", integer_bytes(value)]
  def encode_value(value, _depth) when is_float(value), do: ["d", <<value::float-big-64>>]
  def encode_value(value, _depth) when is_binary(value), do: ["s", string(value)]
  def encode_value(value, _depth) when is_atom(value), do: ["a", string("Atom"), "s", string(Atom.to_string(value))]

  def encode_value(value, depth) when is_list(value) do
    {count, items} = list_items(value, depth + 1, 0, [])
    ["A", u32(count), items]
  end

  def encode_value(value, depth) when is_tuple(value) do
    items = value |> Tuple.to_list() |> Enum.map(&encode_value(&1, depth + 1))
    ["P", u32(tuple_size(value)), items]
  end

  def encode_value(value, depth) when is_map(value) do
    pairs = for {key, item} <- :maps.to_list(value), do: [encode_value(key, depth + 1), encode_value(item, depth + 1)]
    ["M", u32(map_size(value)), pairs]
  end

  def encode_value(value, _depth), do: raise(Unsendable, type: kind(value))

  defp list_items([], _depth, count, items), do: {count, Enum.reverse(items)}
  defp list_items([head | tail], depth, count, items), do: list_items(tail, depth, count + 1, [encode_value(head, depth) | items])
  defp list_items(_tail, _depth, _count, _items), do: raise(Unsendable, type: "improper list")

  def kind(value) when is_function(value), do: "Function"
  def kind(value) when is_pid(value), do: "PID"
  def kind(value) when is_reference(value), do: "Reference"
  def kind(value) when is_port(value), do: "Port"
  def kind(value) when is_bitstring(value), do: "BitString"
  def kind(_value), do: "term"

  # The bytes of `value`: itself, or X with the kind of what cannot cross (the whole value).
  def encode(value) do
    IO.iodata_to_binary(encode_value(value, 0))
  rescue
    error in Unsendable -> IO.iodata_to_binary(["X", string(error.type)])
  end

  # ------------------------------------------------------------------ bytes in

  def malformed(text), do: raise(Malformed, message: text)

  def take(data, size) do
    case data do
      <<chunk::binary-size(size), rest::binary>> -> {chunk, rest}
      _ -> malformed("truncated")
    end
  end

  def read_u32(data) do
    case data do
      <<value::unsigned-big-32, rest::binary>> -> {value, rest}
      _ -> malformed("truncated")
    end
  end

  def read_string(data) do
    {size, rest} = read_u32(data)
    take(rest, size)
  end

  def read_integer(data) do
    {size, rest} = read_u32(data)

    if size == 0 do
      {0, rest}
    else
      {bytes, rest} = take(rest, size)
      <<value::signed-big-size(size * 8)>> = bytes
      # One canonical form: the fewest bytes (values.py's encoder), so equal values have equal bytes.
      if value == 0 or div(bit_length(abs(value)) + 8, 8) != size, do: malformed("an integer not in its shortest form")
      {value, rest}
    end
  end

  # {a value rebuilt from the front of `data`, the rest}: Unsendable for X (a value the sender could not carry),
  # Malformed for anything that is not one well-formed value of a type Elixir rebuilds.
  def decode_value(_data, depth) when depth > @max_depth, do: malformed("nested too deeply")

  def decode_value(<<tag, rest::binary>>, depth) do
    case tag do
      ?n -> {nil, rest}
      ?T -> {true, rest}
      ?F -> {false, rest}
      ?z -> read_integer(rest)
      ?d -> read_float(rest)
      ?s -> read_string(rest)
      ?A -> decode_list(rest, depth)
      ?P -> with {items, rest} <- decode_list(rest, depth), do: {List.to_tuple(items), rest}
      ?M -> decode_map(rest, depth)
      ?a -> decode_dynamic(rest)
      ?X ->
        {type, _rest} = read_string(rest)
        raise Unsendable, type: scrub(type)
      _ -> malformed("a tag Elixir does not read: #{inspect(<<tag>>)}")
    end
  end

  def decode_value(_data, _depth), do: malformed("truncated")

  defp read_float(data) do
    case data do
      <<value::float-big-64, rest::binary>> -> {value, rest}
      <<_::binary-size(8), _::binary>> -> malformed("a float Elixir cannot hold (NaN or an infinity)")
      _ -> malformed("truncated")
    end
  end

  # Item by item: a count alone never makes the reader allocate it.
  defp decode_list(data, depth) do
    {count, rest} = read_u32(data)
    decode_items(rest, count, depth + 1, [])
  end

  defp decode_items(data, 0, _depth, items), do: {Enum.reverse(items), data}

  defp decode_items(data, count, depth, items) do
    {item, rest} = decode_value(data, depth)
    decode_items(rest, count - 1, depth, [item | items])
  end

  defp decode_map(data, depth) do
    {count, rest} = read_u32(data)
    decode_pairs(rest, count, depth + 1, %{})
  end

  defp decode_pairs(data, 0, _depth, map), do: {map, data}

  defp decode_pairs(data, count, depth, map) do
    {key, rest} = decode_value(data, depth)
    {item, rest} = decode_value(rest, depth)
    if Map.has_key?(map, key), do: malformed("a map with a key twice")
    decode_pairs(rest, count - 1, depth, Map.put(map, key, item))
  end

  defp decode_dynamic(data) do
    case read_string(data) do
      {"Atom", <<?s, rest::binary>>} ->
        {name, rest} = read_string(rest)
        if byte_size(name) > @max_atom or not String.valid?(name), do: malformed("not an atom's name")
        if name in ["nil", "true", "false"], do: malformed("nil, true and false cross as n, T and F")
        {String.to_atom(name), rest}

      {"Atom", _rest} ->
        malformed("not an atom's name")

      {type, _rest} ->
        malformed("a dynamic type Elixir does not rebuild: #{inspect(type)}")
    end
  end

  def scrub(text), do: if(String.valid?(text), do: text, else: inspect(text, binaries: :as_binaries))

  # The one value `data` holds.
  def decode(data) do
    case decode_value(data, 0) do
      {value, ""} -> value
      _ -> malformed("trailing bytes")
    end
  end

  # ------------------------------------------------------------------ framing

  def frame(message), do: [u32(IO.iodata_length(message)), message]

  # {:ok, message, rest} for a whole framed message at the front of `buffer`, :more if it needs more bytes.
  def unframe(buffer) do
    case buffer do
      <<size::unsigned-big-32, _::binary>> when size > @max_message -> malformed("a message over 1 GiB")
      <<size::unsigned-big-32, message::binary-size(size), rest::binary>> -> {:ok, message, rest}
      _ -> :more
    end
  end
end
