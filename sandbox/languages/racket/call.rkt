#lang racket/base
;; The judge's channel to the candidate's process (installed and compiled as /opt/passk/racket/call.rkt): the stub
;; in the judge's main.rkt calls `passk-call`, and judge.rkt ends the tests through `passk-pass` and `passk-failed`.
;; The report goes to descriptor 3, calls to 4, replies come on 5.
;;
;; How a call ends the tests instead of answering (report.py): the candidate's process ended or closed its channel
;; (ENDED), the function raised (RAISED <kind>: <message>, which the tests cannot catch), it returned a value the
;; wire cannot carry (ERROR), or it sent anything but one well-formed answer (BROKEN). Data the candidate wrote
;; unasked is looked for before each call, before PASS (there it is BROKEN), and as failing tests end (FLAG
;; out_of_turn).

(require ffi/unsafe/port "wire.rkt")
(provide passk-call passk-pass passk-failed)

(define report (unsafe-file-descriptor->port 3 'report '(write)))
(define calls (unsafe-file-descriptor->port 4 'calls '(write)))
(define replies (unsafe-file-descriptor->port 5 'replies '(read)))
;; How long the ending judge waits for the candidate's process to end once its calls are closed.
(define SURPLUS-WAIT-S 0.1)

(define (write-report text)
  (write-string text report)
  (flush-output report))

;; #t if the candidate wrote anything no call asked for (one byte of it is consumed); an end of input is not data.
(define (unasked? wait)
  (with-handlers ([exn:fail? (lambda (e) #f)])
    (and (sync/timeout wait replies)
         (not (eof-object? (read-byte replies))))))

;; Unasked data as failing tests end: the calls are closed, so an honest server returns and its process ends.
(define (surplus?)
  (with-handlers ([exn:fail? void]) (close-output-port calls))
  (unasked? SURPLUS-WAIT-S))

;; End the tests with `record` as the report (its last line is the outcome: report.py).
(define (finish record)
  (write-report (string-append (if (surplus?) "FLAG out_of_turn\n" "") record))
  (exit 1))

(define (cannot-compare name type)
  (finish (format "ERROR ~a() returned a value of type ~a, which passk cannot compare" name type)))

(define (answer name reply)
  (define in (open-input-bytes reply))
  (define (done) (unless (eof-object? (peek-byte in)) (malformed "trailing bytes")))
  (with-handlers ([exn:fail:passk-unsendable? (lambda (e) (cannot-compare name (exn:fail:passk-unsendable-type e)))]
                  [exn:fail:passk-malformed? (lambda (e) (finish (format "BROKEN ~a(): ~a" name (exn-message e))))])
    (case (read-byte in)
      [(69) ; E
       (define kind (bytes->string/utf-8 (read-string-bytes in) #\?))
       (define text (bytes->string/utf-8 (read-string-bytes in) #\?))
       (done)
       (finish (format "RAISED ~a: ~a" kind text))]
      [(85) ; U
       (define type (bytes->string/utf-8 (read-string-bytes in) #\?))
       (done)
       (cannot-compare name type)]
      [(82) ; R
       (define value (decode-value in 0))
       (done)
       value]
      [else (malformed "not an answer")])))

;; The stubs' call: `name` with the arguments as the tests passed them.
(define (passk-call name args)
  (when (unasked? 0) (finish (format "BROKEN ~a(): the program wrote on its channel before the call" name)))
  (define encoded
    (for/list ([arg (in-list args)])
      (define bytes (encode arg))
      (when (eqv? (bytes-ref bytes 0) (char->integer #\X))
        (finish (format "ERROR the tests pass ~a() a value of type ~a, which passk cannot send" name
                        (bytes->string/utf-8 (subbytes bytes 5) #\?))))
      bytes))
  (define message (apply bytes-append #"C" (string-bytes (string->bytes/utf-8 name)) (u32 (length args)) encoded))
  (unless (send-message calls message) (finish "ENDED"))
  (define reply
    (with-handlers ([exn:fail:passk-malformed? (lambda (e) (finish (format "BROKEN ~a(): ~a" name (exn-message e))))])
      (receive replies)))
  (unless reply (finish "ENDED"))
  (answer name reply))

;; After the tests ran without a failure: the only way to a pass.
(define (passk-pass)
  (when (unasked? 0) (finish "BROKEN the program wrote on its channel after its last answer"))
  (flush-output (current-output-port))
  (write-report "PASS")
  (exit 0))

;; The tests failed (their report is on stderr already).
(define (passk-failed)
  (flush-output (current-output-port))
  (flush-output (current-error-port))
  (when (surplus?) (write-report "FLAG out_of_turn\n"))
  (exit 1))
