package passk;

import java.io.BufferedInputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;

/**
 * The judge's side of the value wire (sandbox/runtime/values.py, report.py): the stubs of the function to
 * complete call {@link #call}, which sends the arguments to the candidate's process and rebuilds the value that
 * comes back; the launcher calls {@link #start} before the tests' main and {@link #pass} once it returned.
 *
 * <p>Descriptors: 3 the report (only the judge holds it), 4 calls (written), 5 replies (read). A stub is
 * {@code return passk.Judge.call(new Object() {}, a, b);}: the anonymous class's enclosing method is the stub
 * itself, whose generic parameter and return types (the prompt's signature) guide the codec.
 *
 * <p>How the tests end, on the report: ENDED when the candidate's channel closed (end of input, EPIPE: the JVM
 * ignores SIGPIPE, so a write fails with an IOException instead), RAISED when the call threw in the candidate
 * (the tests cannot catch it: the judge halts there), ERROR for a value of a type the wire cannot carry, BROKEN
 * (after FLAG out_of_turn) for a reply that is not exactly one well-formed answer or for anything sent before it
 * was asked. A failed test throws in the tests' own code (an AssertionError): the JVM ends with status 1 without
 * a report, and PID 1 reads the judge's stderr.
 */
public final class Judge {
    private static OutputStream report;
    private static OutputStream calls;
    private static InputStream replies;
    private static boolean flagged;

    private Judge() {}

    private static final ClassValue<Method> STUBS = new ClassValue<Method>() {
        @Override
        protected Method computeValue(Class<?> marker) {
            return marker.getEnclosingMethod();
        }
    };

    /** Opens the judge's descriptors (before any of the tests runs). */
    public static synchronized void start() throws IOException {
        if (report != null) return;
        report = new FileOutputStream(Wire.descriptor(3));
        calls = new FileOutputStream(Wire.descriptor(4));
        replies = new BufferedInputStream(new FileInputStream(Wire.descriptor(5)), 1 << 16);
    }

    /** Calls the function to complete in the candidate's process; `marker` is an instance of an anonymous class
     * declared in the stub. Returns only a well-formed answer of the stub's return type; ends the tests otherwise. */
    @SuppressWarnings("unchecked")
    public static synchronized <T> T call(Object marker, Object... args) {
        Method stub = STUBS.get(marker.getClass());
        String name = stub.getName();
        try {
            start();
        } catch (IOException e) {
            System.err.println("passk: the judge's descriptors are not there: " + e);
            Runtime.getRuntime().halt(2);
        }
        unasked(name + "()");
        Type[] params = stub.getGenericParameterTypes();
        Wire.Out message = new Wire.Out();
        message.b('C');
        message.string(name);
        message.u32(args.length);
        try {
            for (int i = 0; i < args.length; i++) Wire.encode(message, params[i], args[i], 1);
        } catch (Wire.Unsendable e) {
            end("ERROR the tests passed " + name + "() a value of type " + e.type + ", which passk cannot send");
        }
        try {
            Wire.send(calls, message);
        } catch (IOException e) {
            end("ENDED");
        }
        byte[] reply = null;
        try {
            reply = Wire.receive(replies);
        } catch (IOException e) {
            end("ENDED");
        } catch (Wire.Malformed e) {
            broken(name + "(): " + e.getMessage());
        }
        if (reply == null) end("ENDED");
        Wire.In r = new Wire.In(reply);
        try {
            int kind = r.b();
            if (kind == 'E') {
                String type = r.string();
                String text = r.string();
                if (!r.done()) throw new Wire.Malformed("trailing bytes");
                end("RAISED " + type + ": " + text);
            }
            if (kind == 'U') {
                String type = r.string();
                if (!r.done()) throw new Wire.Malformed("trailing bytes");
                end("ERROR " + name + "() returned a value of type " + type + ", which passk cannot compare");
            }
            if (kind != 'R') throw new Wire.Malformed("not an answer");
            Type returns = stub.getGenericReturnType();
            Object value;
            if (returns == void.class) {
                if (r.b() != 'n') throw new Wire.Malformed("a value from a function that returns nothing");
                value = null;
            } else {
                value = Wire.decode(r, returns, 0);
            }
            if (!r.done()) throw new Wire.Malformed("trailing bytes");
            return (T) value;
        } catch (Wire.Malformed e) {
            broken(name + "(): " + e.getMessage());
        } catch (Wire.Unsendable e) {
            end("ERROR " + name + "() returned a value of type " + e.type + ", which passk cannot compare");
        }
        throw new AssertionError("unreachable");
    }

    /** After the tests' main returned: the only way to a pass. */
    public static synchronized void pass() throws IOException {
        start();
        unasked("the end of the tests");
        end("PASS", 0);
    }

    /** Anything waiting on the reply pipe before a call was sent unasked: BROKEN. What the buffer read ahead
     * counts too (a reply and a forged one after it can arrive in one read). */
    private static void unasked(String where) {
        int waiting;
        try {
            waiting = replies.available();
        } catch (IOException e) {
            waiting = 0;
        }
        if (waiting > 0) broken("the solution's process sent data before " + where + " asked for it");
    }

    private static void broken(String why) {
        flag();
        end("BROKEN " + why);
    }

    private static void flag() {
        if (flagged) return;
        flagged = true;
        try {
            report.write("FLAG out_of_turn\n".getBytes(StandardCharsets.US_ASCII));
            report.flush();
        } catch (IOException e) {
            // PID 1 reads what arrived; nothing more can be said.
        }
    }

    private static void end(String record) {
        end(record, 1);
    }

    private static void end(String record, int status) {
        System.out.flush();
        System.err.flush();
        try {
            report.write(record.getBytes(StandardCharsets.UTF_8));
            report.flush();
        } catch (IOException e) {
            status = 2;
        }
        Runtime.getRuntime().halt(status);
    }
}
