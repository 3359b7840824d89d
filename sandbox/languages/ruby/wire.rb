# frozen_string_literal: true

# The value wire (sandbox/runtime/values.py has the rule) in Ruby: framing on descriptors and the codec.
# Installed in the Ruby image as /opt/passk/ruby/wire.rb; used by the judge (judge.rb) and by passk's server in
# the candidate's process (server.rb).
#
# Ruby's values are dynamic, so every value crosses with its own class and is rebuilt as exactly that:
#   nil n, false F, true T, Integer z (any size), Float d (binary64: -0.0, NaN payloads and the infinities keep),
#   a String in UTF-8 s (its bytes, valid UTF-8 or not), Array A, Hash M (pairs in insertion order), Set S,
#   and, as `a <type>`: a String in another encoding ("String:<encoding>", its bytes), a Symbol ("Symbol", its
#   name), a Rational ("Rational", a tuple of numerator and denominator), a Complex ("Complex", a tuple of its
#   real and imaginary parts). A subclass of Array, Hash, String or Set crosses as its base class: the tests
#   compare with their own values' `==`, which sees only the elements.
# Anything else (Range, Struct, Proc, Method, Object, a Hash comparing by identity, a recursive or too deeply
# nested value) cannot be rebuilt faithfully: the whole value crosses as X with its class's name, and the judge
# fails the sample as an error. A receiver refuses any other tag, and any byte that is not exactly one
# well-formed value in its one canonical form (Malformed).
#
# Only data crosses: the receiver builds fresh values from bytes and never calls a method of the sender's.
# In the candidate's process the model's code runs after this file is loaded and may redefine core methods; the
# ones the codec relies on are taken here, when it loads, and called through bind_call.

require 'set'

module PasskWire
  MAX_DEPTH = 100
  MAX_MESSAGE = 1 << 30
  READ_CHUNK = 1 << 20

  class Malformed < StandardError; end

  # A value the wire cannot carry; `type` names it (values.py's X).
  class Unsendable < StandardError
    attr_reader :type

    def initialize(type)
      super("a value of type #{type}")
      @type = type
    end
  end

  CLASS_OF = Kernel.instance_method(:class)
  SUBCLASS = Module.instance_method(:<=)
  MODULE_NAME = Module.instance_method(:name)
  ARRAY_LENGTH = Array.instance_method(:length)
  ARRAY_AT = Array.instance_method(:[])
  HASH_PAIRS = Hash.instance_method(:to_a)
  HASH_IDENTITY = Hash.instance_method(:compare_by_identity?)
  SET_ITEMS = Set.instance_method(:to_a)
  STRING_BINARY = String.instance_method(:b)
  STRING_ENCODING = String.instance_method(:encoding)
  STRING_BYTESIZE = String.instance_method(:bytesize)
  SYMBOL_NAME = Symbol.instance_method(:name)
  INTEGER_ABS = Integer.instance_method(:abs)
  INTEGER_BITS = Integer.instance_method(:bit_length)
  INTEGER_TO_S = Integer.instance_method(:to_s)
  FLOAT_PACK = Array.instance_method(:pack)
  RATIONAL_NUMERATOR = Rational.instance_method(:numerator)
  RATIONAL_DENOMINATOR = Rational.instance_method(:denominator)
  COMPLEX_REAL = Complex.instance_method(:real)
  COMPLEX_IMAGINARY = Complex.instance_method(:imaginary)
  UTF_8 = Encoding::UTF_8

  # ------------------------------------------------------------------ bytes out

  def self.u32(value)
    FLOAT_PACK.bind_call([value], 'N')
  end

  def self.string(out, bytes)
    out << u32(STRING_BYTESIZE.bind_call(bytes)) << bytes
  end

  # Two's complement, big-endian, in the fewest bytes that hold the value and its sign (values.py's `z`).
  def self.integer_bytes(value)
    return u32(0) if value.equal?(0)

    size = (INTEGER_BITS.bind_call(INTEGER_ABS.bind_call(value)) + 8) / 8
    unsigned = value.negative? ? value + (1 << (8 * size)) : value
    hex = INTEGER_TO_S.bind_call(unsigned, 16).rjust(size * 2, '0')
    u32(size) + [hex].pack('H*')
  end

  def self.class_name(value)
    MODULE_NAME.bind_call(CLASS_OF.bind_call(value)) || 'an anonymous class'
  end

  # The bytes of `value` (a value node), or Unsendable.
  def self.encode_value(out, value, depth, seen)
    raise Unsendable, 'deeply nested value' if depth > MAX_DEPTH

    klass = CLASS_OF.bind_call(value)
    if klass.equal?(NilClass) then out << 'n'
    elsif klass.equal?(TrueClass) then out << 'T'
    elsif klass.equal?(FalseClass) then out << 'F'
    elsif klass.equal?(Integer) then out << 'z' << integer_bytes(value)
    elsif klass.equal?(Float) then out << 'd' << FLOAT_PACK.bind_call([value], 'G')
    elsif SUBCLASS.bind_call(klass, String)
      encoding = STRING_ENCODING.bind_call(value)
      bytes = STRING_BINARY.bind_call(value)
      if encoding == UTF_8
        out << 's'
      else
        out << 'a'
        string(out, "String:#{encoding.name}".b)
        out << 's'
      end
      string(out, bytes)
    elsif klass.equal?(Symbol)
      name = SYMBOL_NAME.bind_call(value)
      raise Unsendable, 'Symbol' unless [UTF_8, Encoding::US_ASCII].include?(STRING_ENCODING.bind_call(name))

      out << 'a'
      string(out, 'Symbol'.b)
      out << 's'
      string(out, STRING_BINARY.bind_call(name))
    elsif SUBCLASS.bind_call(klass, Array)
      nest(value, seen) do
        length = ARRAY_LENGTH.bind_call(value)
        out << 'A' << u32(length)
        length.times { |i| encode_value(out, ARRAY_AT.bind_call(value, i), depth + 1, seen) }
      end
    elsif SUBCLASS.bind_call(klass, Hash)
      raise Unsendable, 'Hash comparing by identity' if HASH_IDENTITY.bind_call(value)

      nest(value, seen) do
        pairs = HASH_PAIRS.bind_call(value)
        out << 'M' << u32(pairs.length)
        pairs.each do |key, item|
          encode_value(out, key, depth + 1, seen)
          encode_value(out, item, depth + 1, seen)
        end
      end
    elsif SUBCLASS.bind_call(klass, Set)
      nest(value, seen) do
        items = SET_ITEMS.bind_call(value)
        out << 'S' << u32(items.length)
        items.each { |item| encode_value(out, item, depth + 1, seen) }
      end
    elsif klass.equal?(Rational)
      out << 'a'
      string(out, 'Rational'.b)
      out << 'P' << u32(2) << 'z' << integer_bytes(RATIONAL_NUMERATOR.bind_call(value))
      out << 'z' << integer_bytes(RATIONAL_DENOMINATOR.bind_call(value))
    elsif klass.equal?(Complex)
      out << 'a'
      string(out, 'Complex'.b)
      out << 'P' << u32(2)
      encode_value(out, COMPLEX_REAL.bind_call(value), depth + 1, seen)
      encode_value(out, COMPLEX_IMAGINARY.bind_call(value), depth + 1, seen)
    else
      raise Unsendable, class_name(value)
    end
  end

  # A container that holds itself is too deeply nested to cross.
  def self.nest(value, seen)
    raise Unsendable, 'deeply nested value' if seen.key?(value)

    seen[value] = true
    yield
    seen.delete(value)
  end

  # The bytes of `value`: itself, or X with the class of what cannot cross (the whole value).
  def self.encode(value)
    out = ''.b
    encode_value(out, value, 0, {}.compare_by_identity)
    out
  rescue Unsendable => e
    out = 'X'.b
    string(out, e.type.b)
    out
  rescue SystemStackError
    out = 'X'.b
    string(out, 'deeply nested value'.b)
    out
  end

  # ------------------------------------------------------------------ bytes in

  # A message being read: a binary String and a position.
  class Reader
    def initialize(data)
      @data = data
      @at = 0
    end

    def take(size)
      raise Malformed, 'truncated' if size.negative? || @at + size > @data.bytesize

      chunk = @data.byteslice(@at, size)
      @at += size
      chunk
    end

    def letter
      take(1)
    end

    def u32
      take(4).unpack1('N')
    end

    def string
      take(u32)
    end

    def finish
      raise Malformed, 'trailing bytes' unless @at == @data.bytesize
    end
  end

  ENCODING_PREFIX = 'String:'

  def self.integer(reader)
    size = reader.u32
    return 0 if size.zero?

    bytes = reader.take(size)
    value = bytes.unpack1('H*').to_i(16)
    value -= 1 << (8 * size) if bytes.getbyte(0) >= 0x80
    # One canonical form: the fewest bytes (values.py's encoder), so equal values have equal bytes.
    raise Malformed, 'an integer not in its shortest form' unless (value.abs.bit_length + 8) / 8 == size

    value
  end

  # A value rebuilt from `reader`: Unsendable for X (a value the sender could not carry), Malformed for anything
  # that is not one well-formed value of a type Ruby rebuilds.
  def self.decode_value(reader, depth)
    raise Malformed, 'nested too deeply' if depth > MAX_DEPTH

    tag = reader.letter
    case tag
    when 'n' then nil
    when 'T' then true
    when 'F' then false
    when 'z' then integer(reader)
    when 'd' then reader.take(8).unpack1('G')
    when 's' then reader.string.force_encoding(UTF_8)
    when 'A'
      # Item by item: a count alone never makes the reader allocate it.
      array = []
      reader.u32.times { array << decode_value(reader, depth + 1) }
      array
    when 'M'
      count = reader.u32
      hash = {}
      count.times do
        key = decode_value(reader, depth + 1)
        raise Malformed, 'a map with a key twice' if hash.key?(key)

        hash[key] = decode_value(reader, depth + 1)
      end
      hash
    when 'S'
      count = reader.u32
      set = Set.new
      count.times do
        item = decode_value(reader, depth + 1)
        raise Malformed, 'a set with an item twice' if set.include?(item)

        set << item
      end
      set
    when 'a' then dynamic(reader, reader.string, depth)
    when 'X' then raise Unsendable, reader.string.force_encoding(UTF_8).scrub
    else raise Malformed, "a tag Ruby does not read: #{tag.inspect}"
    end
  end

  def self.dynamic(reader, type, depth)
    if type == 'Symbol'
      raise Malformed, 'not a symbol' unless reader.letter == 's'

      name = reader.string.force_encoding(UTF_8)
      raise Malformed, 'a symbol that is not UTF-8' unless name.valid_encoding?

      name.to_sym
    elsif type.start_with?(ENCODING_PREFIX)
      encoding = begin
        Encoding.find(type.byteslice(ENCODING_PREFIX.bytesize..).force_encoding(UTF_8))
      rescue ArgumentError
        raise Malformed, "an unknown encoding: #{type.inspect}"
      end
      raise Malformed, "not the encoding's name: #{type.inspect}" unless "#{ENCODING_PREFIX}#{encoding.name}" == type
      raise Malformed, 'a UTF-8 string crosses as s' if encoding == UTF_8
      raise Malformed, 'not a string' unless reader.letter == 's'

      reader.string.force_encoding(encoding)
    elsif type == 'Rational'
      raise Malformed, 'not a pair' unless reader.letter == 'P' && reader.u32 == 2
      raise Malformed, 'not an integer' unless reader.letter == 'z'

      numerator = integer(reader)
      raise Malformed, 'not an integer' unless reader.letter == 'z'

      denominator = integer(reader)
      raise Malformed, 'not a rational in lowest terms' unless denominator.positive? && numerator.gcd(denominator) == 1

      Rational(numerator, denominator)
    elsif type == 'Complex'
      raise Malformed, 'not a pair' unless reader.letter == 'P' && reader.u32 == 2

      real = decode_value(reader, depth + 1)
      imaginary = decode_value(reader, depth + 1)
      unless [real, imaginary].all? { |part| [Integer, Float, Rational].include?(part.class) }
        raise Malformed, 'a complex number of other parts than real numbers'
      end

      Complex.rect(real, imaginary)
    else
      raise Malformed, "a dynamic type Ruby does not rebuild: #{type.inspect}"
    end
  end

  # The one value `data` holds.
  def self.decode(data)
    reader = Reader.new(data.b)
    value = decode_value(reader, 0)
    reader.finish
    value
  end

  # ------------------------------------------------------------------ framing

  # Reads exactly `size` bytes from `io`; nil at a clean end of input before the first byte, Malformed if cut.
  def self.read_exactly(io, size, clean_end)
    data = ''.b
    while data.bytesize < size
      chunk = begin
        io.sysread([size - data.bytesize, READ_CHUNK].min)
      rescue EOFError
        return nil if clean_end && data.empty?

        raise Malformed, 'a message cut short'
      rescue Errno::EINTR
        next
      end
      data << chunk
    end
    data
  end

  # The next framed message on `io`, or nil at a clean end of input before it.
  def self.receive(io)
    header = read_exactly(io, 4, true)
    return nil if header.nil?

    size = header.unpack1('N')
    raise Malformed, 'a message over 1 GiB' if size > MAX_MESSAGE

    size.zero? ? ''.b : read_exactly(io, size, false)
  end

  # Writes `message` framed; false if the other side is gone.
  def self.send_message(io, message)
    framed = u32(message.bytesize) + message
    at = 0
    while at < framed.bytesize
      begin
        at += io.syswrite(framed.byteslice(at..))
      rescue Errno::EINTR, Errno::EAGAIN
        next
      rescue Errno::EPIPE
        return false
      end
    end
    true
  end
end
