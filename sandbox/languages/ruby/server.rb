# frozen_string_literal: true

# passk's server in the candidate's process (installed as /opt/passk/ruby/server.rb, loaded with `ruby -r` before
# the model's code, so the builtins it relies on are taken before anything can redefine them). The candidate's
# program is the original program's text up to the tests (the prompt and the model's completion), followed by one
# statement that passk adds:
#
#     ;::PasskServer.serve(:name)
#
# so the function is served exactly where the tests would have started in one process, after every top-level
# statement of the model's code. The server reads calls on descriptor 3, calls the function with the arguments
# rebuilt from data, and answers on descriptor 4: the value it returned ('R'), or what it raised ('E' <class>
# <message>). When the judge closes its end, serve returns and the program runs on to its end.
#
# What test/unit lets through a test (NoMemoryError, SystemExit, signals) ends this process as it would end the
# one process of the original program: `exit` in the function exits, memory exhaustion is fatal.
#
# The server is the candidate's own: the model's code may change anything in this process, and so anything the
# server sends. The judge trusts none of it (judge.rb, values.py).

require_relative 'wire'

module PasskServer
  CALLS = 3
  REPLIES = 4
  MAIN = TOPLEVEL_BINDING.receiver
  METHOD = Kernel.instance_method(:method)
  CALL = Method.instance_method(:call)
  CLASS_OF = Kernel.instance_method(:class)
  MODULE_NAME = Module.instance_method(:name)
  MESSAGE = Exception.instance_method(:message)

  @serving = false

  def self.describe(error)
    type = MODULE_NAME.bind_call(CLASS_OF.bind_call(error)) || 'Exception'
    text = begin
      MESSAGE.bind_call(error).to_s
    rescue Exception # rubocop:disable Lint/RescueException
      ''
    end
    [type, text]
  end

  def self.answer(function, args)
    result = CALL.bind_call(function, *args)
    'R'.b << PasskWire.encode(result)
  rescue NoMemoryError, SystemExit, SignalException
    raise
  rescue Exception => e # rubocop:disable Lint/RescueException
    type, text = describe(e)
    reply = 'E'.b
    PasskWire.string(reply, type.b)
    PasskWire.string(reply, text.b)
    reply
  end

  # Serve the top-level method `name` until the judge closes its end.
  def self.serve(name)
    return if @serving

    @serving = true
    function = METHOD.bind_call(MAIN, name)
    calls = IO.for_fd(CALLS, 'rb', autoclose: false)
    replies = IO.for_fd(REPLIES, 'wb', autoclose: false)
    loop do
      message = PasskWire.receive(calls)
      return if message.nil?

      reader = PasskWire::Reader.new(message)
      raise PasskWire::Malformed, 'not a call' unless reader.letter == 'C'

      called = reader.string
      args = []
      reader.u32.times { args << PasskWire.decode_value(reader, 1) }
      reader.finish
      raise PasskWire::Malformed, "a call of #{called}, which is not served" unless called == name.to_s.b

      return unless PasskWire.send_message(replies, answer(function, args))
    end
  rescue PasskWire::Malformed, PasskWire::Unsendable
    # Only the judge writes calls: a call it did not mean is passk's own failure.
    Process.exit!(70)
  end
end
