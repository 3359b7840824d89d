// The candidate's side of the value wire (sandbox/runtime/values.py), in passk.dll: reads calls on fd 3, calls the
// function the model wrote, answers on fd 4.
//
// The candidate's build holds a generated class (PasskMain.cs, see sandbox/languages/csharp.py) whose Main serves
// and whose one static method PasskCall has the prompt's signature, as the compiler resolved it in the candidate's
// own compile, and calls the function. Its types guide the codec: the arguments are rebuilt as its parameter types,
// the value is encoded as its declared return type (its runtime type for a declared object). What the function
// throws crosses as 'E' (class and message); a value the wire cannot carry as 'U'. When the judge closes its end,
// the server exits with status 0.
//
// Everything here runs in the candidate's process only: nothing the model's code does to it reaches the judge
// except bytes, which the judge rebuilds by type and refuses when they are anything else.
using System;
using System.IO;
using System.Reflection;

namespace Passk {

public static class Server {
    public static void Serve(Type entry, string name) {
        MethodInfo call = entry.GetMethod("PasskCall", BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic);
        if (call == null) throw new InvalidOperationException("passk: " + entry.FullName + " has no PasskCall");
        ParameterInfo[] parameters = call.GetParameters();
        Stream calls = Wire.Descriptor(3, FileAccess.Read), replies = Wire.Descriptor(4, FileAccess.Write);
        while (true) {
            byte[] message;
            try {
                message = Wire.Receive(calls);
            } catch (Malformed) {
                message = null;
            }
            if (message == null) Environment.Exit(0);
            byte[] reply = Answer(call, name, parameters, message);
            try {
                Wire.Send(replies, reply);
            } catch (IOException) {
                Environment.Exit(0);  // the judge is gone
            }
        }
    }

    static byte[] Answer(MethodInfo call, string name, ParameterInfo[] parameters, byte[] message) {
        var r = new Wire.In(message);
        var args = new object[parameters.Length];
        try {
            if (r.Tag() != 'C') throw new Malformed("not a call");
            string called = r.String();
            if (called != name) throw new Malformed("a call of another function: " + called);
            if (r.U32() != parameters.Length) throw new Malformed("a call with another number of arguments");
            for (int i = 0; i < parameters.Length; i++) args[i] = Wire.Decode(r, parameters[i].ParameterType, 1);
            if (!r.Done) throw new Malformed("trailing bytes");
        } catch (Exception e) {
            // Only a judge that is not passk's sends this: say so and stop.
            Console.Error.WriteLine("passk: a call the server cannot read: " + e.Message);
            Environment.Exit(3);
        }
        var out_ = new Wire.Out();
        try {
            object value = call.Invoke(null, args);
            out_.B('R');
            if (call.ReturnType == typeof(void)) out_.B('n');
            else Wire.Encode(out_, call.ReturnType, value, 0);
        } catch (TargetInvocationException e) {
            return Raised(e.InnerException ?? e);
        } catch (Unsendable e) {
            out_ = new Wire.Out();
            out_.B('U');
            out_.String(e.Type);
        } catch (Exception e) {  // thrown by the value's own members while it was encoded (its enumerator, ...)
            return Raised(e);
        }
        return out_.ToArray();
    }

    static byte[] Raised(Exception thrown) {
        var out_ = new Wire.Out();
        out_.B('E');
        string type, text;
        try {
            type = thrown.GetType().FullName;
        } catch (Exception) {
            type = "System.Exception";
        }
        try {
            text = thrown.Message ?? "";
        } catch (Exception) {  // a Message of the model's own that throws
            text = "";
        }
        out_.String(type);
        out_.String(text);
        return out_.ToArray();
    }
}

}
