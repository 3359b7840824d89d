# frozen_string_literal: true

# The judge's runtime for Ruby (installed as /opt/passk/ruby/judge.rb): the entry point of the judge's process,
# `ruby judge.rb` in the judge's directory. It holds none of the model's code.
#
# It loads the tests (main.rb: the prompt's code before the function to complete, a stub for that function, the
# problem's tests) with test/unit's automatic run turned off, runs their test cases itself, and reports PASS on
# descriptor 3 once every test ran and passed. A stub's call sends the arguments to the candidate's process
# (descriptor 4) and returns the value it answers (descriptor 5), rebuilt from data. How a call ends the tests
# instead (report.py): the candidate's process ended or closed its channel (ENDED), the function raised (RAISED
# <class>: <message>, which the tests cannot rescue), it returned a value the wire cannot carry (ERROR), or it
# sent anything but one well-formed answer (BROKEN). Data the candidate wrote unasked is looked for before each
# call, before PASS (there it is BROKEN), and as failing tests end (FLAG out_of_turn).
#
# A failed test is reported as one process reports it: test/unit's report on stdout, and here the first fault on
# stderr (`Test::Unit::AssertionFailedError: ...` for a failed assertion, `<class>: <message>` for an error in
# the tests), with exit status 1; PID 1 classifies it with the language's stderr patterns.

require_relative 'wire'

module PasskJudge
  REPORT = IO.for_fd(3, 'wb', autoclose: false)
  CALLS = IO.for_fd(4, 'wb', autoclose: false)
  REPLIES = IO.for_fd(5, 'rb', autoclose: false)
  # How long the ending judge waits for the candidate's process to end once its calls are closed.
  SURPLUS_WAIT_S = 0.1

  @reported = false

  # True if the candidate's process wrote anything no call asked for (one byte of it is consumed). An end of
  # input is not data: the next call sees the candidate gone.
  def self.unasked?
    return false unless IO.select([REPLIES], nil, nil, 0)

    REPLIES.sysread(1)
    true
  rescue EOFError, IOError, SystemCallError
    false
  end

  # Unasked data, looked for as failing tests end: the calls are closed, so an honest server returns and its
  # process ends (end of input on the replies); whatever arrives before that, or within SURPLUS_WAIT_S, is unasked.
  def self.surplus?
    begin
      CALLS.close
    rescue IOError, SystemCallError
      nil
    end
    return false unless IO.select([REPLIES], nil, nil, SURPLUS_WAIT_S)

    REPLIES.sysread(1)
    true
  rescue EOFError, IOError, SystemCallError
    false
  end

  def self.write_report(text)
    @reported = true
    REPORT.syswrite(text)
  end

  # End the tests with `record` as the report (its last line is the outcome: report.py).
  def self.finish(record)
    write_report((surplus? ? "FLAG out_of_turn\n" : '') + record)
  ensure
    Process.exit!(1)
  end

  def self.cannot_compare(name, type)
    finish("ERROR #{name}() returned a value of type #{type}, which passk cannot compare")
  end

  # The stubs' call: `name` with the arguments as the tests passed them.
  def self.call(name, args)
    finish("BROKEN #{name}(): the program wrote on its channel before the call") if unasked?
    message = 'C'.b
    PasskWire.string(message, name.b)
    message << PasskWire.u32(args.length)
    args.each do |arg|
      encoded = PasskWire.encode(arg)
      if encoded.start_with?('X')
        type = PasskWire::Reader.new(encoded.byteslice(1..)).string.force_encoding('UTF-8')
        finish("ERROR the tests pass #{name}() a value of type #{type}, which passk cannot send")
      end
      message << encoded
    end
    finish('ENDED') unless PasskWire.send_message(CALLS, message)
    reply = begin
      PasskWire.receive(REPLIES)
    rescue PasskWire::Malformed => e
      finish("BROKEN #{name}(): #{e.message}")
    end
    finish('ENDED') if reply.nil?
    answer(name, reply)
  end

  def self.answer(name, reply)
    reader = PasskWire::Reader.new(reply)
    case reader.letter
    when 'E'
      type = reader.string.force_encoding('UTF-8').scrub
      text = reader.string.force_encoding('UTF-8').scrub
      reader.finish
      finish("RAISED #{type}: #{text}")
    when 'U'
      type = reader.string.force_encoding('UTF-8').scrub
      reader.finish
      cannot_compare(name, type)
    when 'R'
      value = PasskWire.decode_value(reader, 0)
      reader.finish
      value
    else
      raise PasskWire::Malformed, 'not an answer'
    end
  rescue PasskWire::Unsendable => e
    cannot_compare(name, e.type)
  rescue PasskWire::Malformed => e
    finish("BROKEN #{name}(): #{e.message}")
  end

  # After the tests returned: the only way to a pass. (Only what is there already: waiting for the candidate's
  # process to end would cost every pass its exit.)
  def self.pass
    finish('BROKEN the program wrote on its channel after its last answer') if unasked?
    write_report('PASS')
    $stdout.flush
    Process.exit!(0)
  end

  # The tests failed: test/unit's report is on stdout; the first fault goes to stderr for PID 1's patterns.
  def self.failed(faults)
    fault = faults.first
    line = if fault.is_a?(Test::Unit::Failure)
             "Test::Unit::AssertionFailedError: #{fault.message}"
           elsif fault.respond_to?(:exception)
             "#{fault.exception.class}: #{fault.exception.message}"
           else
             "passk: the tests did not pass (#{fault.class})"
           end
    $stdout.flush
    $stderr.write(line.lines.first(20).join, "\n")
    $stderr.flush
    write_report("FLAG out_of_turn\n") if surplus?
    Process.exit!(1)
  end

  def self.run_tests
    require 'test/unit'
    Test::Unit::AutoRunner.need_auto_run = false
    load File.join(Dir.pwd, 'main.rb')
    require 'test/unit/collector/descendant'
    suite = Test::Unit::Collector::Descendant.new.collect('passk')
    # Tests written as top-level code (no test case) ran as main.rb loaded; test cases run here.
    return if suite.tests.empty?

    require 'test/unit/ui/console/testrunner'
    result = Test::Unit::UI::Console::TestRunner.run(suite, output: $stdout)
    failed(result.faults) unless result.passed? && result.faults.empty?
  end
end

begin
  PasskJudge.run_tests
rescue SystemExit, NoMemoryError, SignalException
  raise
rescue Exception => e # rubocop:disable Lint/RescueException  (an error of the tests' own top-level code)
  $stdout.flush
  $stderr.write("#{e.class}: #{e.message}\n")
  PasskJudge.write_report("FLAG out_of_turn\n") if PasskJudge.surplus?
  Process.exit!(1)
end
PasskJudge.pass
