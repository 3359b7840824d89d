package passk;

import java.io.BufferedInputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;

/**
 * The candidate's side of the value wire (sandbox/runtime/values.py): reads calls on fd 3, calls the function
 * the model wrote, answers on fd 4.
 *
 * <p>The candidate's build holds a generated class (PasskMain.java, see sandbox/languages/java.py) with one
 * static method {@code passkCall} whose parameters and return type are the prompt's signature, as javac resolved
 * them in the candidate's own compile, and which calls the function. Its generic types guide the codec: the
 * arguments are rebuilt as those types, the value is encoded as the declared return type (its runtime type for a
 * declared Object). What the function throws crosses as 'E' (class name and message); a value the wire cannot
 * carry as 'U'. When the judge closes its end, the server exits with status 0.
 *
 * <p>Everything here runs in the candidate's process only: nothing the model's code does to it reaches the
 * judge except bytes, which the judge rebuilds by type and refuses when they are anything else.
 */
public final class Server {
    private Server() {}

    public static void serve(Class<?> entry, String name) throws IOException {
        Method call = null;
        for (Method m : entry.getDeclaredMethods()) {
            if (m.getName().equals("passkCall") && Modifier.isStatic(m.getModifiers())) call = m;
        }
        if (call == null) throw new IllegalStateException("passk: " + entry.getName() + " has no passkCall");
        call.setAccessible(true);
        Type[] params = call.getGenericParameterTypes();
        Type returns = call.getGenericReturnType();
        InputStream calls = new BufferedInputStream(new FileInputStream(Wire.descriptor(3)), 1 << 16);
        OutputStream replies = new FileOutputStream(Wire.descriptor(4));
        while (true) {
            byte[] message;
            try {
                message = Wire.receive(calls);
            } catch (Wire.Malformed e) {
                message = null;
            }
            if (message == null) System.exit(0);
            Wire.Out reply = answer(call, name, params, returns, message);
            try {
                Wire.send(replies, reply);
            } catch (IOException e) {
                System.exit(0);  // the judge is gone
            }
        }
    }

    private static Wire.Out answer(Method call, String name, Type[] params, Type returns, byte[] message) {
        Wire.In r = new Wire.In(message);
        Object[] args = new Object[params.length];
        try {
            if (r.b() != 'C') throw new Wire.Malformed("not a call");
            String called = r.string();
            if (!called.equals(name)) throw new Wire.Malformed("a call of another function: " + called);
            if (r.u32() != params.length) throw new Wire.Malformed("a call with another number of arguments");
            for (int i = 0; i < params.length; i++) args[i] = Wire.decode(r, params[i], 1);
            if (!r.done()) throw new Wire.Malformed("trailing bytes");
        } catch (Wire.Malformed | Wire.Unsendable e) {
            // Only a judge that is not passk's sends this: say so and stop.
            System.err.println("passk: a call the server cannot read: " + e.getMessage());
            System.exit(3);
        }
        Wire.Out out = new Wire.Out();
        try {
            Object value = call.invoke(null, args);
            out.b('R');
            if (returns == void.class) {
                out.b('n');
            } else {
                Wire.encode(out, returns, value, 0);
            }
        } catch (InvocationTargetException e) {
            return raised(e.getCause());
        } catch (Wire.Unsendable e) {
            out = new Wire.Out();
            out.b('U');
            out.string(e.type);
        } catch (IllegalAccessException e) {
            return raised(e);
        } catch (Throwable e) {  // thrown by the value's own methods while it was encoded (its iterator, ...)
            return raised(e);
        }
        return out;
    }

    private static Wire.Out raised(Throwable thrown) {
        Wire.Out out = new Wire.Out();
        out.b('E');
        out.string(thrown == null ? "java.lang.Throwable" : thrown.getClass().getName());
        String text;
        try {
            text = thrown == null ? "" : String.valueOf(thrown.getMessage());
            if (thrown != null && thrown.getMessage() == null) text = "";
        } catch (Throwable e) {  // a message method of the model's own that throws
            text = "";
        }
        out.string(text);
        return out;
    }
}
