;; How passk runs a Clojure program (compiled into /opt/passk/clojure/passk.jar): `clojure.main -m passk.run main.clj`
;; loads the file as `clojure.main main.clj` does (clojure.main's bindings, the user namespace), and reports an
;; uncaught error as clojure.main does, by its summary on stderr ("Syntax error reading source at (main.clj:3:1).",
;; "Execution error (ArithmeticException) at ...", then the message), with exit status 1; clojure.main would also
;; write the full report in a file under /tmp (or, on stderr, before the summary, pushing it out of what a result
;; keeps of stderr).
(ns passk.run
  (:require [clojure.main :as main]))

(defn -main [file & _]
  (try
    (load-file file)
    (catch Throwable t
      (binding [*out* *err*]
        (println (-> t Throwable->map main/ex-triage main/ex-str))
        (flush))
      (System/exit 1))))
