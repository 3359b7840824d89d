;; passk's server in the candidate's process (compiled into /opt/passk/clojure/passk.jar, loaded before any of the
;; model's code). The candidate's program is the original program's text up to the tests (the prompt and the model's
;; completion, which closes the function), followed by the form passk adds:
;;
;;     (passk.server/serve name "name")
;;
;; so the function is served exactly where the tests would have started in one file, after every top-level form of
;; the model's code. The server reads calls on descriptor 3, applies the function to the arguments rebuilt from data,
;; and answers on descriptor 4: the value it returned ('R'), or what it threw ('E' <class> <message>), realising a
;; lazy answer as it encodes it (as the tests' `=` would). When the judge closes its end, serve returns and the file
;; runs on to its end. `(System/exit 0)` in the function exits the process, as it would end the one original program.
;;
;; The server is the candidate's own: the model's code may redefine anything here, and so anything it sends. The
;; judge trusts none of it (passk/judge.clj, values.py).
(ns passk.server
  (:require [passk.wire :as wire]))

(defn- answer ^bytes [function args]
  (try
    (let [encoded (wire/encode (apply function args))]
      (wire/message (fn [^java.io.DataOutputStream out]
                      (.writeByte out (int \R))
                      (.write out encoded 0 (alength encoded)))))
    (catch Throwable raised
      (wire/message (fn [out]
                      (.writeByte ^java.io.DataOutputStream out (int \E))
                      (wire/put-text out (.getName (class raised)))
                      (wire/put-text out (str (.getMessage raised))))))))

(defn- call [^bytes message]
  (let [in (wire/stream message)]
    (when-not (= (wire/read-byte in) (int \C)) (wire/malformed "not a call"))
    (let [called (wire/read-text in)
          args (vec (for [_ (range (wire/read-u32 in))] (wire/decode-value in 1)))]
      (wire/done in)
      [called args])))

(defn serve
  "Serve `function` (named `name`) until the judge closes its end."
  [function name]
  (let [calls (wire/input 3)
        replies (wire/output 4)]
    ;; Only the judge writes calls: a call it did not mean is passk's own failure.
    (try
      (loop []
        (when-let [message (wire/receive calls)]
          (let [[called args] (call message)]
            (when-not (= called name) (wire/malformed "a call of a function not served"))
            (when (wire/send-message replies (answer function args))
              (recur)))))
      (catch clojure.lang.ExceptionInfo e
        (if (:passk (ex-data e)) (System/exit 70) (throw e))))))
