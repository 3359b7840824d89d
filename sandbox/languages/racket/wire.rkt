#lang racket/base
;; The value wire (sandbox/runtime/values.py has the rule) in Racket: the codec and the framing of messages.
;; Installed (and compiled) in the Racket image under /opt/passk/racket; used by the judge (call.rkt, judge.rkt)
;; and by passk's server in the candidate's process (server.rkt).
;;
;; Racket's values are dynamic, so every value crosses with its own type and is rebuilt as exactly that:
;;   #t T, #f F, an exact integer z (any size), a flonum d, a string s (UTF-8), a character c (its scalar value),
;;   a proper list A (the empty list too), and as `a <type>`: "Rational" (an exact non-integer: a tuple of numerator
;;   and denominator), "Symbol" and "Keyword" (their names as s), "Pair" (a pair that is not a list: a tuple of car
;;   and cdr), "Vector" (its items as A), "Bytes" (s), "Void" (n), and a hash table as "Hash:<equal|eqv|eq>" or
;;   "Hash:<...>-mutable" (its pairs as M): `equal?` tells hash tables of another kind or mutability apart.
;; Anything else (a procedure, a struct, a box, a mutable pair, a weak hash, a complex number, a value nested deeper
;; than MAX-DEPTH) crosses as X with its type, and the judge fails the sample as an error. A receiver refuses any
;; other tag, and any byte that is not exactly one well-formed value in its one canonical form.
;;
;; Only data crosses: the receiver builds fresh values from bytes, and `equal?` on them runs no code of the sender's.

(require racket/list)
(provide (struct-out exn:fail:passk-malformed) (struct-out exn:fail:passk-unsendable)
         malformed u32 string-bytes encode decode decode-value read-u32 read-string-bytes
         receive send-message)

(define MAX-DEPTH 100)
(define MAX-MESSAGE (expt 2 30))

(struct exn:fail:passk-malformed exn:fail ())
(struct exn:fail:passk-unsendable exn:fail (type))

(define (malformed text) (raise (exn:fail:passk-malformed text (current-continuation-marks))))
(define (unsendable type)
  (raise (exn:fail:passk-unsendable (format "a value of type ~a" type) (current-continuation-marks) type)))

;; ------------------------------------------------------------------ bytes out

(define (u32 n) (integer->integer-bytes n 4 #f #t))
(define (string-bytes b) (bytes-append (u32 (bytes-length b)) b))
(define (text-bytes s) (string-bytes (string->bytes/utf-8 s)))

;; Two's complement, big-endian, in the fewest bytes that hold the value and its sign (values.py's `z`).
(define (integer-bytes v)
  (cond
    [(zero? v) (u32 0)]
    [else
     (define size (quotient (+ (integer-length (abs v)) 8) 8))
     (define u (if (negative? v) (+ v (arithmetic-shift 1 (* 8 size))) v))
     (define out (make-bytes size 0))
     (for ([i (in-range size)])
       (bytes-set! out (- size 1 i) (bitwise-and (arithmetic-shift u (* -8 i)) 255)))
     (bytes-append (u32 size) out)]))

(define (hash-kind h)
  (string-append "Hash:" (cond [(hash-equal? h) "equal"] [(hash-eqv? h) "eqv"] [else "eq"])
                 (if (immutable? h) "" "-mutable")))

(define (type-name v)
  (cond
    [(procedure? v) "procedure"]
    [(box? v) "box"]
    [(mpair? v) "mpair"]
    [(hash? v) "weak hash"]
    [(number? v) "number"]
    [(symbol? v) "uninterned symbol"]
    [else (let ([kind (vector-ref (struct->vector v) 0)])
            (regexp-replace #rx"^struct:" (symbol->string kind) ""))]))

(define (encode-value v out depth)
  (when (> depth MAX-DEPTH) (unsendable "deeply nested value"))
  (define (put . parts) (for ([part (in-list parts)]) (write-bytes part out)))
  (define (dynamic name) (put #"a" (text-bytes name)))
  (define (items xs) (for ([x xs]) (encode-value x out (add1 depth))))
  (cond
    [(eq? v #t) (put #"T")]
    [(eq? v #f) (put #"F")]
    [(exact-integer? v) (put #"z" (integer-bytes v))]
    [(flonum? v) (put #"d" (real->floating-point-bytes v 8 #t))]
    [(and (rational? v) (exact? v))
     (dynamic "Rational")
     (put #"P" (u32 2) #"z" (integer-bytes (numerator v)) #"z" (integer-bytes (denominator v)))]
    [(string? v) (put #"s" (text-bytes v))]
    [(char? v) (put #"c" (u32 (char->integer v)))]
    [(and (symbol? v) (symbol-interned? v)) (dynamic "Symbol") (put #"s" (text-bytes (symbol->string v)))]
    [(keyword? v) (dynamic "Keyword") (put #"s" (text-bytes (keyword->string v)))]
    [(list? v) (put #"A" (u32 (length v))) (items v)]
    [(pair? v)
     (dynamic "Pair")
     (put #"P" (u32 2))
     (items (list (car v) (cdr v)))]
    [(vector? v) (dynamic "Vector") (put #"A" (u32 (vector-length v))) (items (vector->list v))]
    [(bytes? v) (dynamic "Bytes") (put #"s" (string-bytes v))]
    [(void? v) (dynamic "Void") (put #"n")]
    [(and (hash? v) (not (hash-weak? v)) (not (hash-ephemeron? v)))
     (dynamic (hash-kind v))
     (define pairs (hash->list v))
     (put #"M" (u32 (length pairs)))
     (for ([pair (in-list pairs)]) (items (list (car pair) (cdr pair))))]
    [else (unsendable (type-name v))]))

;; The bytes of `v`: itself, or X with the type of what cannot cross (the whole value).
(define (encode v)
  (with-handlers ([exn:fail:passk-unsendable?
                   (lambda (e) (bytes-append #"X" (text-bytes (exn:fail:passk-unsendable-type e))))])
    (define out (open-output-bytes))
    (encode-value v out 0)
    (get-output-bytes out)))

;; ------------------------------------------------------------------ bytes in (from an input port over one message)

(define (take in n)
  (define chunk (read-bytes n in))
  (if (or (eof-object? chunk) (< (bytes-length chunk) n))
      (if (zero? n) #"" (malformed "truncated"))
      chunk))

(define (read-u32 in) (integer-bytes->integer (take in 4) #f #t))
(define (read-string-bytes in) (take in (read-u32 in)))
(define (read-text in)
  (define b (read-string-bytes in))
  (with-handlers ([exn:fail:contract? (lambda (e) (malformed "a string that is not UTF-8"))])
    (bytes->string/utf-8 b)))

(define (read-integer in)
  (define size (read-u32 in))
  (cond
    [(zero? size) 0]
    [else
     (define b (take in size))
     (define u (for/fold ([acc 0]) ([byte (in-bytes b)]) (+ (* acc 256) byte)))
     (define v (if (>= (bytes-ref b 0) 128) (- u (arithmetic-shift 1 (* 8 size))) u))
     ;; One canonical form: the fewest bytes (values.py's encoder), so equal values have equal bytes.
     (unless (and (not (zero? v)) (= size (quotient (+ (integer-length (abs v)) 8) 8)))
       (malformed "an integer not in its shortest form"))
     v]))

(define (expect in tag what)
  (unless (eqv? (read-byte in) (char->integer tag)) (malformed (format "not ~a" what))))

;; A value rebuilt from `in`: exn:fail:passk-unsendable for X (a value the sender could not carry),
;; exn:fail:passk-malformed for anything that is not one well-formed value of a type Racket rebuilds.
(define (decode-value in depth)
  (when (> depth MAX-DEPTH) (malformed "nested too deeply"))
  (define tag (read-byte in))
  (when (eof-object? tag) (malformed "truncated"))
  (case (integer->char tag)
    [(#\T) #t]
    [(#\F) #f]
    [(#\z) (read-integer in)]
    [(#\d) (floating-point-bytes->real (take in 8) #t)]
    [(#\s) (read-text in)]
    [(#\c)
     (define n (read-u32 in))
     (when (or (> n #x10FFFF) (<= #xD800 n #xDFFF)) (malformed "not a character"))
     (integer->char n)]
    [(#\A) (read-items in depth)]
    [(#\a) (decode-dynamic in (read-text in) depth)]
    [(#\X) (unsendable (bytes->string/utf-8 (read-string-bytes in) #\?))]
    [else (malformed (format "a tag Racket does not read: ~s" (bytes tag)))]))

;; Item by item: a count alone never makes the reader allocate it.
(define (read-items in depth)
  (for/list ([_ (in-range (read-u32 in))]) (decode-value in (add1 depth))))

(define (decode-dynamic in type depth)
  (cond
    [(equal? type "Rational")
     (expect in #\P "a pair")
     (unless (= (read-u32 in) 2) (malformed "not a pair"))
     (expect in #\z "an integer")
     (define n (read-integer in))
     (expect in #\z "an integer")
     (define d (read-integer in))
     (unless (and (> d 1) (= 1 (gcd n d))) (malformed "not a fraction in lowest terms"))
     (/ n d)]
    [(member type '("Symbol" "Keyword"))
     (expect in #\s "a name")
     (define name (read-text in))
     (if (equal? type "Symbol") (string->symbol name) (string->keyword name))]
    [(equal? type "Pair")
     (expect in #\P "a pair")
     (unless (= (read-u32 in) 2) (malformed "not a pair"))
     (define a (decode-value in (add1 depth)))
     (define d (decode-value in (add1 depth)))
     (when (list? d) (malformed "a list crosses as A"))
     (cons a d)]
    [(equal? type "Vector") (expect in #\A "a sequence") (list->vector (read-items in depth))]
    [(equal? type "Bytes") (expect in #\s "bytes") (bytes-copy (read-string-bytes in))]
    [(equal? type "Void") (expect in #\n "null") (void)]
    [(regexp-match #rx"^Hash:(equal|eqv|eq)(-mutable)?$" type)
     => (lambda (found)
          (expect in #\M "a map")
          (define mutable? (and (third found) #t))
          (define h (case (second found)
                      [("equal") (make-hash)] [("eqv") (make-hasheqv)] [else (make-hasheq)]))
          (for ([_ (in-range (read-u32 in))])
            (define key (decode-value in (add1 depth)))
            (when (hash-has-key? h key) (malformed "a map with a key twice"))
            (hash-set! h key (decode-value in (add1 depth))))
          (cond
            [mutable? h]
            [else (for/fold ([frozen (case (second found)
                                       [("equal") (hash)] [("eqv") (hasheqv)] [else (hasheq)])])
                            ([(key value) (in-hash h)])
                    (hash-set frozen key value))]))]
    [else (malformed (format "a dynamic type Racket does not rebuild: ~s" type))]))

;; The one value `data` holds.
(define (decode data)
  (define in (open-input-bytes data))
  (define v (decode-value in 0))
  (unless (eof-object? (peek-byte in)) (malformed "trailing bytes"))
  v)

;; ------------------------------------------------------------------ framing

;; The next framed message on `port`, #f at a clean end of input before it, malformed if cut short.
(define (receive port)
  (define header (read-bytes 4 port))
  (cond
    [(eof-object? header) #f]
    [(< (bytes-length header) 4) (malformed "a message cut short")]
    [else
     (define size (integer-bytes->integer header #f #t))
     (when (> size MAX-MESSAGE) (malformed "a message over 1 GiB"))
     (define message (if (zero? size) #"" (read-bytes size port)))
     (when (or (eof-object? message) (< (bytes-length message) size)) (malformed "a message cut short"))
     message]))

;; Writes `message` framed; #f if the other side is gone.
(define (send-message port message)
  (with-handlers ([exn:fail? (lambda (e) #f)])
    (write-bytes (u32 (bytes-length message)) port)
    (write-bytes message port)
    (flush-output port)
    #t))
