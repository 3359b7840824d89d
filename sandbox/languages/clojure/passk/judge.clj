;; The judge's runtime for Clojure (compiled into /opt/passk/clojure/passk.jar): the entry point of the judge's
;; process, `clojure.main -m passk.judge` in the judge's directory. It holds none of the model's code.
;;
;; It loads the tests' file (main.clj: the prompt's code before the function to complete, a stub for that function
;; calling `call`, the problem's tests) with clojure.test's report noted, and reports PASS once the file ran to its end
;; with a test summary and no failed or erring assertion (MultiPL-E passes a run whose summary says "0 failures,
;; 0 errors"). clojure.test reports a failed assertion on stdout and goes on, as in one process; the judge notes the
;; first on stderr too (FAIL or ERROR, PID 1 takes its detail from it), and fails the tests (exit status 1).
;;
;; The report goes to descriptor 3, calls to 4, replies come on 5. How a call ends the tests instead of answering
;; (report.py): the candidate's process ended or closed its channel (ENDED), the function threw (RAISED <class>:
;; <message>, which the tests cannot catch), it returned a value the wire cannot carry (ERROR), or it sent anything
;; but one well-formed answer (BROKEN). Data the candidate wrote unasked is looked for before each call, before PASS
;; (there it is BROKEN), and as failing tests end (FLAG out_of_turn).
(ns passk.judge
  (:require [clojure.test :as test]
            [passk.wire :as wire]))

(def ^:private channels (delay {:report (wire/output 3) :calls (wire/output 4) :replies (wire/input 5)}))
;; How long the ending judge waits for data the candidate wrote unasked once its calls are closed.
(def ^:private SURPLUS-WAIT-MS 100)

(defn- write-report [^String text]
  (let [^java.io.OutputStream out (:report @channels)]
    (.write out (.getBytes text "UTF-8"))
    (.flush out)))

(defn- unasked?
  "True if the candidate wrote anything no call asked for."
  [wait-ms]
  (let [^java.io.InputStream replies (:replies @channels)
        until (+ (System/currentTimeMillis) wait-ms)]
    (loop []
      (cond
        (pos? (try (.available replies) (catch java.io.IOException _ 0))) true
        (< (System/currentTimeMillis) until) (do (Thread/sleep 5) (recur))
        :else false))))

(defn- surplus?
  "Unasked data as failing tests end: the calls are closed, so an honest server returns and its process ends."
  []
  (try (.close ^java.io.OutputStream (:calls @channels)) (catch java.io.IOException _))
  (unasked? SURPLUS-WAIT-MS))

(defn- flush-outputs []
  (.flush ^java.io.Writer *out*)
  (.flush ^java.io.Writer *err*)
  (.flush System/out)
  (.flush System/err))

(defn- finish
  "End the tests with `record` as the report (its last line is the outcome: report.py)."
  [record]
  (flush-outputs)
  (write-report (str (if (surplus?) "FLAG out_of_turn\n" "") record))
  (System/exit 1))

(defn- cannot-compare [name type-name]
  (finish (format "ERROR %s() returned a value of type %s, which passk cannot compare" name type-name)))

(defn- answer [name ^bytes reply]
  (try
    (let [in (wire/stream reply)
          kind (wire/read-byte in)]
      (case (char kind)
        \E (let [class-name (wire/read-text in)
                 text (wire/read-text in)]
             (wire/done in)
             (finish (format "RAISED %s: %s" class-name text)))
        \U (let [type-name (wire/read-text in)]
             (wire/done in)
             (cannot-compare name type-name))
        \R (let [value (wire/decode-value in 0)]
             (wire/done in)
             value)
        (wire/malformed "not an answer")))
    (catch clojure.lang.ExceptionInfo e
      (cond
        (wire/unsendable-type e) (cannot-compare name (wire/unsendable-type e))
        (wire/malformed? e) (finish (format "BROKEN %s(): %s" name (ex-message e)))
        :else (throw e)))))

(defn call
  "The stubs' call: `name` with the arguments as the tests passed them."
  [name args]
  (when (unasked? 0) (finish (format "BROKEN %s(): the program wrote on its channel before the call" name)))
  (let [encoded (for [arg args]
                  (let [^bytes b (wire/encode arg)]
                    (when (= (aget b 0) (byte (int \X)))
                      (finish (format "ERROR the tests pass %s() a value of type %s, which passk cannot send" name
                                      (String. b 5 (- (alength b) 5) "UTF-8"))))
                    b))
        message (wire/message (fn [^java.io.DataOutputStream out]
                                (.writeByte out (int \C))
                                (wire/put-text out name)
                                (.writeInt out (count args))
                                (doseq [^bytes b encoded] (.write out b 0 (alength b)))))]
    (when-not (wire/send-message (:calls @channels) message) (finish "ENDED"))
    (let [reply (try (wire/receive (:replies @channels))
                     (catch clojure.lang.ExceptionInfo e
                       (if (wire/malformed? e) (finish (format "BROKEN %s(): %s" name (ex-message e))) (throw e))))]
      (when-not reply (finish "ENDED"))
      (answer name reply))))

(defn- pass
  "After the tests ran without a failure: the only way to a pass."
  []
  (when (unasked? 0) (finish "BROKEN the program wrote on its channel after its last answer"))
  (flush-outputs)
  (write-report "PASS")
  (System/exit 0))

(defn- failed
  "The tests failed (their report is on stdout and stderr already)."
  []
  (flush-outputs)
  (when (surplus?) (write-report "FLAG out_of_turn\n"))
  (System/exit 1))

(defn -main [& _]
  (let [failures (atom nil)
        summaries (atom 0)
        report test/report
        note (fn [event]
               (case (:type event)
                 (:fail :error)
                 (when (compare-and-set! failures nil event)
                   (binding [*out* *err*]
                     (println (str (if (= :fail (:type event)) "FAIL" "ERROR")
                                   " expected: " (pr-str (:expected event))
                                   ", actual: " (let [actual (:actual event)]
                                                  (if (instance? Throwable actual)
                                                    (str (.getName (class actual)) ": " (.getMessage ^Throwable actual))
                                                    (pr-str actual)))))))
                 :summary (swap! summaries inc)
                 nil)
               (report event))]
    (try
      (binding [test/report note]
        (load-file "main.clj"))
      (catch Throwable e
        (binding [*out* *err*]
          (println (str "ERROR uncaught " (.getName (class e)) ": " (.getMessage e)))
          (when-let [cause (.getCause e)]
            (println (str "  caused by " (.getName (class cause)) ": " (.getMessage cause)))))
        (failed)))
    (if (or @failures (zero? @summaries)) (failed) (pass))))
