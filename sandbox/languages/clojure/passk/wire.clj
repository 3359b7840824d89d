;; The value wire (sandbox/runtime/values.py has the rule) in Clojure: the codec and the framing of messages.
;; Compiled into the Clojure image's /opt/passk/clojure/passk.jar; used by the judge (passk/judge.clj) and by passk's
;; server in the candidate's process (passk/server.clj).
;;
;; Clojure's values are dynamic, so every value crosses with its own class and is rebuilt as exactly that:
;;   nil n, true T, false F, a Long l, an Integer i, a Short h, a Byte b, a BigInt z (any size), a Double d, a Float f,
;;   a Character c (its UTF-16 unit), a String s (WTF-8, as Java's), a vector A (a map entry too), a map M (in its
;;   iteration order; rebuilt as a persistent map), a set S (rebuilt as a persistent set), and as `a <type>`:
;;   "List" (a list, a seq or any other sequential collection: its items as A, rebuilt as a list), "Keyword" and
;;   "Symbol" (their names as s, "ns/name" where they have a namespace), "Ratio" (a tuple of numerator and
;;   denominator), "BigDecimal" (its text as s) and "BigInteger" (a java.math.BigInteger, z).
;; Anything else (a function, a record, an atom, a Java object, a value nested deeper than MAX-DEPTH) crosses as X with
;; its class, and the judge fails the sample as an error. A receiver refuses any other tag, and any byte that is not
;; exactly one well-formed value in its one canonical form.
;;
;; Only data crosses: the receiver builds fresh values from bytes, and `=` on them runs no code of the sender's. A lazy
;; answer is realised whole as it is encoded: an infinite one runs the candidate out of time or memory, where `=` in
;; one process could stop at the first item that differs.
(ns passk.wire
  (:import (java.io ByteArrayOutputStream DataInputStream DataOutputStream EOFException FileDescriptor
                    FileInputStream FileOutputStream InputStream OutputStream)
           (java.math BigDecimal BigInteger)))

(set! *warn-on-reflection* true)

(def MAX-DEPTH 100)
(def MAX-MESSAGE (bit-shift-left 1 30))

(defn malformed [text] (throw (ex-info (str text) {:passk :malformed})))
(defn unsendable [type-name] (throw (ex-info (str "a value of type " type-name) {:passk :unsendable :type type-name})))
(defn malformed? [e] (= :malformed (:passk (ex-data e))))
(defn unsendable-type [e] (when (= :unsendable (:passk (ex-data e))) (:type (ex-data e))))

;; ------------------------------------------------------------------ descriptors

(defn descriptor
  "An inherited descriptor as a FileDescriptor (java.io names none above 2; a passk process cannot open
  /proc/self/fd, so the field is set by reflection: the JVM runs with java.io opened to unnamed modules)."
  ^FileDescriptor [fd]
  (let [d (FileDescriptor.)
        field (.getDeclaredField FileDescriptor "fd")]
    (.setAccessible field true)
    (.setInt field d (int fd))
    d))

(defn input [fd] (FileInputStream. (descriptor fd)))
(defn output [fd] (FileOutputStream. (descriptor fd)))

;; ------------------------------------------------------------------ bytes out

(defn- put-u32 [^DataOutputStream out n] (.writeInt out (unchecked-int n)))

(defn- wtf8
  "A Java string's UTF-16 units as WTF-8: UTF-8, a lone surrogate as its own 3-byte form."
  ^bytes [^String s]
  (let [out (ByteArrayOutputStream. (count s))
        n (.length s)]
    (loop [i 0]
      (when (< i n)
        (let [cp (.codePointAt s i)]
          (cond
            (< cp 0x80) (.write out (int cp))
            (< cp 0x800) (do (.write out (int (bit-or 0xC0 (bit-shift-right cp 6))))
                             (.write out (int (bit-or 0x80 (bit-and cp 0x3F)))))
            (< cp 0x10000) (do (.write out (int (bit-or 0xE0 (bit-shift-right cp 12))))
                               (.write out (int (bit-or 0x80 (bit-and (bit-shift-right cp 6) 0x3F))))
                               (.write out (int (bit-or 0x80 (bit-and cp 0x3F)))))
            :else (do (.write out (int (bit-or 0xF0 (bit-shift-right cp 18))))
                      (.write out (int (bit-or 0x80 (bit-and (bit-shift-right cp 12) 0x3F))))
                      (.write out (int (bit-or 0x80 (bit-and (bit-shift-right cp 6) 0x3F))))
                      (.write out (int (bit-or 0x80 (bit-and cp 0x3F))))))
          (recur (+ i (Character/charCount cp))))))
    (.toByteArray out)))

(defn put-bytes [^DataOutputStream out ^bytes b]
  (put-u32 out (alength b))
  (.write out b 0 (alength b)))

(defn put-text [^DataOutputStream out ^String s] (put-bytes out (wtf8 s)))

(defn- integer-size
  "values.py's size of a `z`: the bits of the value's magnitude and a sign bit, in whole bytes."
  [^BigInteger v]
  (quot (+ (.bitLength (.abs v)) 8) 8))

(defn- put-integer
  "Two's complement, big-endian, in values.py's number of bytes (`integer-size`)."
  [^DataOutputStream out ^BigInteger v]
  (if (zero? (.signum v))
    (put-u32 out 0)
    (let [size (integer-size v)
          b (.toByteArray v)
          padded (byte-array size (byte (if (neg? (.signum v)) -1 0)))]
      (System/arraycopy b 0 padded (- size (alength b)) (alength b))
      (put-bytes out padded))))

(defn- tag [^DataOutputStream out ^String t] (.writeByte out (int (.charAt t 0))))

(defn- dynamic [out type-name] (tag out "a") (put-text out type-name))

(defn- type-name [v]
  (cond
    (fn? v) "function"
    (instance? clojure.lang.IRecord v) (.getName (class v))
    :else (.getName (class v))))

(declare encode-value)

(defn- items [out xs depth]
  (let [xs (vec xs)]
    (put-u32 out (count xs))
    (doseq [x xs] (encode-value out x (inc depth)))))

(defn encode-value [^DataOutputStream out v depth]
  (when (> depth MAX-DEPTH) (unsendable "deeply nested value"))
  (cond
    (nil? v) (tag out "n")
    (instance? Boolean v) (tag out (if (.booleanValue ^Boolean v) "T" "F"))
    (instance? Long v) (do (tag out "l") (.writeLong out (long v)))
    (instance? Integer v) (do (tag out "i") (.writeInt out (int v)))
    (instance? Short v) (do (tag out "h") (.writeShort out (int (short v))))
    (instance? Byte v) (do (tag out "b") (.writeByte out (int (byte v))))
    (instance? clojure.lang.BigInt v) (do (tag out "z") (put-integer out (.toBigInteger ^clojure.lang.BigInt v)))
    (instance? BigInteger v) (do (dynamic out "BigInteger") (tag out "z") (put-integer out v))
    (instance? Double v) (do (tag out "d") (.writeLong out (Double/doubleToRawLongBits (double v))))
    (instance? Float v) (do (tag out "f") (.writeInt out (Float/floatToRawIntBits (float v))))
    (instance? Character v) (do (tag out "c") (put-u32 out (int (.charValue ^Character v))))
    (string? v) (do (tag out "s") (put-text out v))
    (ratio? v) (do (dynamic out "Ratio") (tag out "P") (put-u32 out 2)
                   (tag out "z") (put-integer out (.numerator ^clojure.lang.Ratio v))
                   (tag out "z") (put-integer out (.denominator ^clojure.lang.Ratio v)))
    (instance? BigDecimal v) (do (dynamic out "BigDecimal") (tag out "s") (put-text out (str v)))
    (keyword? v) (do (dynamic out "Keyword") (tag out "s") (put-text out (subs (str v) 1)))
    (symbol? v) (do (dynamic out "Symbol") (tag out "s") (put-text out (str v)))
    (instance? clojure.lang.IRecord v) (unsendable (type-name v))
    (vector? v) (do (tag out "A") (items out v depth))
    (instance? java.util.Map v) (let [entries (vec v)]
                                  (tag out "M")
                                  (put-u32 out (count entries))
                                  (doseq [[k x] entries]
                                    (encode-value out k (inc depth))
                                    (encode-value out x (inc depth))))
    (instance? java.util.Set v) (do (tag out "S") (items out v depth))
    (or (sequential? v) (instance? java.util.List v)) (do (dynamic out "List") (tag out "A") (items out v depth))
    :else (unsendable (type-name v))))

(defn encode
  "The bytes of `v`: itself, or X with the type of what cannot cross (the whole value)."
  ^bytes [v]
  (try
    (let [buffer (ByteArrayOutputStream.)]
      (encode-value (DataOutputStream. buffer) v 0)
      (.toByteArray buffer))
    (catch clojure.lang.ExceptionInfo e
      (if-let [t (unsendable-type e)]
        (let [buffer (ByteArrayOutputStream.)
              out (DataOutputStream. buffer)]
          (tag out "X")
          (put-text out t)
          (.toByteArray buffer))
        (throw e)))))

;; ------------------------------------------------------------------ bytes in (from a stream over one message)

(defn- take-bytes ^bytes [^DataInputStream in n]
  (when (or (neg? n) (> n (.available in))) (malformed "truncated"))
  (let [b (byte-array n)]
    (.readFully in b)
    b))

(defn read-u32 [^DataInputStream in]
  (when (< (.available in) 4) (malformed "truncated"))
  (bit-and (long (.readInt in)) 0xFFFFFFFF))

(defn read-byte [^DataInputStream in]
  (let [b (.read in)]
    (when (neg? b) (malformed "truncated"))
    b))

(defn read-string-bytes ^bytes [in] (take-bytes in (read-u32 in)))

(defn- continuation [^bytes b i]
  (when (>= i (alength b)) (malformed "a string that is not WTF-8"))
  (let [c (bit-and (aget b i) 0xFF)]
    (when-not (= 0x80 (bit-and c 0xC0)) (malformed "a string that is not WTF-8"))
    (bit-and c 0x3F)))

(defn- from-wtf8
  "WTF-8 as a Java string: shortest forms only, and a surrogate pair as its 4-byte form, never as two 3-byte ones."
  ^String [^bytes b]
  (let [sb (StringBuilder.)
        n (alength b)]
    (loop [i 0 after-high false]
      (if (>= i n)
        (.toString sb)
        (let [c (bit-and (aget b i) 0xFF)
              [cp size] (cond
                          (< c 0x80) [c 1]
                          (< c 0xC2) (malformed "a string that is not WTF-8")
                          (< c 0xE0) [(bit-or (bit-shift-left (bit-and c 0x1F) 6) (continuation b (inc i))) 2]
                          (< c 0xF0) (let [cp (bit-or (bit-shift-left (bit-and c 0x0F) 12)
                                                      (bit-shift-left (continuation b (inc i)) 6)
                                                      (continuation b (+ i 2)))]
                                       (when (< cp 0x800) (malformed "a string that is not WTF-8"))
                                       [cp 3])
                          (< c 0xF5) (let [cp (bit-or (bit-shift-left (bit-and c 0x07) 18)
                                                      (bit-shift-left (continuation b (inc i)) 12)
                                                      (bit-shift-left (continuation b (+ i 2)) 6)
                                                      (continuation b (+ i 3)))]
                                       (when-not (<= 0x10000 cp 0x10FFFF) (malformed "a string that is not WTF-8"))
                                       [cp 4])
                          :else (malformed "a string that is not WTF-8"))]
          (when (and after-high (<= 0xDC00 cp 0xDFFF)) (malformed "a surrogate pair not as one character"))
          (.appendCodePoint sb (int cp))
          (recur (+ i (long size)) (boolean (<= 0xD800 cp 0xDBFF))))))))

(defn read-text ^String [in] (from-wtf8 (read-string-bytes in)))

(defn- read-integer ^BigInteger [in]
  (let [size (read-u32 in)]
    (if (zero? size)
      BigInteger/ZERO
      (let [b (take-bytes in size)
            v (BigInteger. b)]
        ;; One canonical form: values.py's size, so equal values have equal bytes.
        (when (or (zero? (.signum v)) (not= size (integer-size v)))
          (malformed "an integer not in its shortest form"))
        v))))

(defn- expect [in t what]
  (when-not (= (read-byte in) (int (.charAt ^String t 0))) (malformed (str "not " what))))

(declare decode-value)

(defn- read-items [in depth]
  (let [n (read-u32 in)]
    (loop [i 0 out (transient [])]
      (if (< i n) (recur (inc i) (conj! out (decode-value in (inc depth)))) (persistent! out)))))

(defn- decode-dynamic [in type-name depth]
  (case type-name
    "List" (do (expect in "A" "a sequence") (apply list (read-items in depth)))
    "Keyword" (do (expect in "s" "a name") (keyword (read-text in)))
    "Symbol" (do (expect in "s" "a name") (symbol (read-text in)))
    "BigInteger" (do (expect in "z" "an integer") (read-integer in))
    "Ratio" (do (expect in "P" "a pair")
                (when-not (= 2 (read-u32 in)) (malformed "not a pair"))
                (expect in "z" "an integer")
                (let [n (read-integer in)
                      _ (expect in "z" "an integer")
                      d (read-integer in)]
                  (when-not (and (pos? (.compareTo d BigInteger/ONE)) (= BigInteger/ONE (.gcd n d)))
                    (malformed "not a fraction in lowest terms"))
                  (clojure.lang.Ratio. n d)))
    "BigDecimal" (do (expect in "s" "a decimal's text")
                     (let [text (read-text in)
                           v (try (BigDecimal. text) (catch NumberFormatException _ (malformed "not a decimal")))]
                       (when-not (= text (str v)) (malformed "a decimal not in its own form"))
                       v))
    (malformed (str "a dynamic type Clojure does not rebuild: " (pr-str type-name)))))

(defn decode-value
  "A value rebuilt from `in`: ex-info :unsendable for X (a value the sender could not carry), :malformed for
  anything that is not one well-formed value of a type Clojure rebuilds."
  [^DataInputStream in depth]
  (when (> depth MAX-DEPTH) (malformed "nested too deeply"))
  (let [t (char (read-byte in))]
    (case t
      \n nil
      \T true
      \F false
      \l (do (when (< (.available in) 8) (malformed "truncated")) (.readLong in))
      \i (do (when (< (.available in) 4) (malformed "truncated")) (Integer/valueOf (.readInt in)))
      \h (do (when (< (.available in) 2) (malformed "truncated")) (Short/valueOf (.readShort in)))
      \b (do (when (< (.available in) 1) (malformed "truncated")) (Byte/valueOf (.readByte in)))
      \z (clojure.lang.BigInt/fromBigInteger (read-integer in))
      \d (do (when (< (.available in) 8) (malformed "truncated")) (Double/longBitsToDouble (.readLong in)))
      \f (do (when (< (.available in) 4) (malformed "truncated")) (Float/intBitsToFloat (.readInt in)))
      \c (let [n (read-u32 in)]
           (when (> n 0xFFFF) (malformed "not a UTF-16 unit"))
           (char n))
      \s (read-text in)
      \A (read-items in depth)
      \M (let [n (read-u32 in)]
           (loop [i 0 m {}]
             (if (< i n)
               (let [k (decode-value in (inc depth))
                     x (decode-value in (inc depth))]
                 (when (contains? m k) (malformed "a map with a key twice"))
                 (recur (inc i) (assoc m k x)))
               m)))
      \S (let [n (read-u32 in)]
           (loop [i 0 s #{}]
             (if (< i n)
               (let [x (decode-value in (inc depth))]
                 (when (contains? s x) (malformed "a set with an item twice"))
                 (recur (inc i) (conj s x)))
               s)))
      \a (decode-dynamic in (read-text in) depth)
      \X (unsendable (String. (read-string-bytes in) "UTF-8"))
      (malformed (str "a tag Clojure does not read: " (pr-str t))))))

(defn stream ^DataInputStream [^bytes data] (DataInputStream. (java.io.ByteArrayInputStream. data)))

(defn done [^DataInputStream in] (when (pos? (.available in)) (malformed "trailing bytes")))

(defn decode
  "The one value `data` holds."
  [^bytes data]
  (let [in (stream data)
        v (decode-value in 0)]
    (done in)
    v))

;; ------------------------------------------------------------------ framing

(defn- read-fully
  "n bytes of `in`, or as many as came before its end."
  ^bytes [^InputStream in n]
  (let [b (byte-array n)]
    (loop [at 0]
      (if (< at n)
        (let [got (.read in b at (- n at))]
          (if (neg? got) (java.util.Arrays/copyOf b at) (recur (+ at got))))
        b))))

(defn receive
  "The next framed message on `in`, nil at a clean end of input before it, malformed if cut short."
  [^InputStream in]
  (let [header (read-fully in 4)]
    (cond
      (zero? (alength header)) nil
      (< (alength header) 4) (malformed "a message cut short")
      :else (let [size (bit-and (long (.readInt (stream header))) 0xFFFFFFFF)]
              (when (> size MAX-MESSAGE) (malformed "a message over 1 GiB"))
              (let [message (read-fully in size)]
                (when (< (alength message) size) (malformed "a message cut short"))
                message)))))

(defn send-message
  "Writes `message` framed; false if the other side is gone."
  [^OutputStream out ^bytes message]
  (try
    (let [buffer (ByteArrayOutputStream. (+ 4 (alength message)))
          data (DataOutputStream. buffer)]
      (.writeInt data (alength message))
      (.write data message 0 (alength message))
      (.write out (.toByteArray buffer))
      (.flush out)
      true)
    (catch java.io.IOException _ false)))

(defn message
  "Bytes written by `write` (a function of a DataOutputStream)."
  ^bytes [write]
  (let [buffer (ByteArrayOutputStream.)]
    (write (DataOutputStream. buffer))
    (.toByteArray buffer)))
