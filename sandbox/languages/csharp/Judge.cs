// The judge's side of the value wire (sandbox/runtime/values.py, report.py), in passk.dll. The judge's program
// (sandbox/languages/csharp.py) is the prompt's code before the function to complete, a stub for that function, the
// tests, and a launcher whose Main is `Passk.Judge.Run(typeof(PasskJudge))`: it runs the tests' Main and reports a
// pass once it returned. No byte of the model's code is in it.
//
// A stub is `return Passk.Judge.Call<R>(MethodBase.GetCurrentMethod(), new object[] {a, b});`: the stub's own
// parameter types (the prompt's signature, as the compiler resolved it) guide the codec, R the answer's.
//
// Descriptors: 3 the report (only the judge holds it), 4 calls (written), 5 replies (read). How the tests end, on
// the report: ENDED when the candidate's channel closed, RAISED when the call threw in the candidate (the tests
// cannot catch it: the judge ends there), ERROR for a value of a type the wire cannot carry, BROKEN (after FLAG
// out_of_turn) for a reply that is not exactly one well-formed answer or for anything sent before it was asked.
// A failed Debug.Assert (the judge is compiled with DEBUG, as MultiPL-E compiles the one program) or an exception
// of the tests' own ends the judge with status 1 and the fault on stderr, where PID 1's patterns read it.
using System;
using System.Diagnostics;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;

namespace Passk {

public static class Judge {
    // How long a failing judge waits for the candidate's process to end once its calls are closed.
    const int SurplusWaitMs = 100;
    static Stream report, calls, replies;
    static bool flagged;
    // One call at a time: tests that call the function from several threads wait for each other's answer.
    static readonly object Gate = new object();

    [StructLayout(LayoutKind.Sequential)]
    struct PollFd {
        public int Fd;
        public short Events;
        public short Revents;
    }

    [DllImport("libc", SetLastError = true)]
    static extern int poll([In, Out] PollFd[] fds, UIntPtr count, int timeoutMs);

    const short PollIn = 1;

    /// <summary>Whether the replies descriptor has data (or its end) within `timeoutMs`.</summary>
    static bool Readable(int timeoutMs) {
        var fds = new[] {new PollFd {Fd = 5, Events = PollIn}};
        return poll(fds, (UIntPtr) 1, timeoutMs) > 0 && fds[0].Revents != 0;
    }

    sealed class Asserts : TraceListener {
        public override void Write(string message) {}
        public override void WriteLine(string message) {}
        public override void Fail(string message) { Fail(message, null); }
        public override void Fail(string message, string detail) {
            Failed("System.Diagnostics.DefaultTraceListener.Fail: Debug.Assert failed"
                   + (string.IsNullOrEmpty(message) ? "" : ": " + message) + "\n" + Environment.StackTrace);
        }
    }

    /// <summary>Opens the judge's descriptors and takes the tests' failed assertions (before any test runs).</summary>
    public static void Start() {
        if (report != null) return;
        report = Wire.Descriptor(3, FileAccess.Write);
        calls = Wire.Descriptor(4, FileAccess.Write);
        replies = Wire.Descriptor(5, FileAccess.Read);
        Debug.Listeners.Clear();
        Debug.Listeners.Add(new Asserts());
        Debug.AutoFlush = true;
    }

    /// <summary>The launcher's Main: the tests' Main (the one static Main of the judge's program besides the
    /// launcher's), then the pass.</summary>
    public static void Run(Type launcher, string[] args) {
        Start();
        MethodInfo main = null;
        foreach (Type type in launcher.Assembly.GetTypes()) {
            if (type == launcher) continue;
            MethodInfo found = type.GetMethod("Main", BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic,
                                              null, new[] {typeof(string[])}, null)
                ?? type.GetMethod("Main", BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic, null,
                                  Type.EmptyTypes, null);
            if (found != null) main = found;
        }
        if (main == null) Failed("passk: the tests have no Main");
        try {
            main.Invoke(null, main.GetParameters().Length == 1 ? new object[] {args} : new object[0]);
        } catch (TargetInvocationException e) {
            Exception inner = e.InnerException ?? e;
            Failed("Unhandled Exception:\n" + inner.GetType().FullName + ": " + inner.Message + "\n" + inner.StackTrace);
        }
        Pass();
    }

    /// <summary>Calls the function to complete in the candidate's process. Returns only a well-formed answer of
    /// the stub's return type; ends the tests otherwise.</summary>
    public static T Call<T>(MethodBase stub, object[] args) {
        lock (Gate) return Exchange<T>(stub, args);
    }

    static T Exchange<T>(MethodBase stub, object[] args) {
        Start();
        string name = stub.Name;
        Unasked(name + "()");
        ParameterInfo[] parameters = stub.GetParameters();
        var message = new Wire.Out();
        message.B('C');
        message.String(name);
        message.U32(args.Length);
        try {
            for (int i = 0; i < args.Length; i++) Wire.Encode(message, parameters[i].ParameterType, args[i], 1);
        } catch (Unsendable e) {
            End("ERROR the tests pass " + name + "() a value of type " + e.Type + ", which passk cannot send");
        }
        try {
            Wire.Send(calls, message.ToArray());
        } catch (IOException) {
            End("ENDED");
        }
        byte[] reply = null;
        try {
            reply = Wire.Receive(replies);
        } catch (IOException) {
            End("ENDED");
        } catch (Malformed e) {
            Broken(name + "(): " + e.Message);
        }
        if (reply == null) End("ENDED");
        var r = new Wire.In(reply);
        try {
            char kind = r.Tag();
            if (kind == 'E') {
                string type = r.String(), text = r.String();
                if (!r.Done) throw new Malformed("trailing bytes");
                End("RAISED " + type + ": " + text);
            }
            if (kind == 'U') {
                string type = r.String();
                if (!r.Done) throw new Malformed("trailing bytes");
                End("ERROR " + name + "() returned a value of type " + type + ", which passk cannot compare");
            }
            if (kind != 'R') throw new Malformed("not an answer");
            Type returns = ((MethodInfo) stub).ReturnType;
            object value;
            if (returns == typeof(void)) {
                if (r.Tag() != 'n') throw new Malformed("a value from a function that returns nothing");
                value = null;
            } else {
                value = Wire.Decode(r, returns, 0);
            }
            if (!r.Done) throw new Malformed("trailing bytes");
            return (T) value;
        } catch (Malformed e) {
            Broken(name + "(): " + e.Message);
        } catch (Unsendable e) {
            End("ERROR " + name + "() returned a value of type " + e.Type + ", which passk cannot compare");
        }
        throw new InvalidOperationException("unreachable");
    }

    /// <summary>After the tests' Main returned: the only way to a pass.</summary>
    public static void Pass() {
        Start();
        Unasked("the end of the tests");
        End("PASS", 0);
    }

    /// <summary>A failed test: the fault on stderr, exit status 1 (and the flag if the candidate wrote unasked).</summary>
    public static void Failed(string fault) {
        Console.Out.Flush();
        Console.Error.WriteLine(fault);
        Console.Error.Flush();
        try {
            calls.Dispose();
        } catch (IOException) {
        }
        if (Readable(SurplusWaitMs) && replies.ReadByte() >= 0) Flag();
        Environment.Exit(1);
    }

    /// <summary>Anything waiting on the reply pipe before a call was sent was sent unasked: BROKEN.</summary>
    static void Unasked(string where) {
        if (Readable(0) && replies.ReadByte() >= 0) Broken("the solution's process sent data before " + where + " asked for it");
    }

    static void Broken(string why) {
        Flag();
        End("BROKEN " + why);
    }

    static void Flag() {
        if (flagged) return;
        flagged = true;
        try {
            byte[] line = Encoding.ASCII.GetBytes("FLAG out_of_turn\n");
            report.Write(line, 0, line.Length);
            report.Flush();
        } catch (IOException) {
            // PID 1 reads what arrived; nothing more can be said.
        }
    }

    static void End(string record, int status = 1) {
        Console.Out.Flush();
        Console.Error.Flush();
        try {
            byte[] bytes = Encoding.UTF8.GetBytes(record);
            report.Write(bytes, 0, bytes.Length);
            report.Flush();
        } catch (IOException) {
            status = 2;
        }
        Environment.Exit(status);
    }
}

}
