(* passk's value wire for OCaml (the rule: sandbox/runtime/values.py), the judge's calls and the candidate's
   server. Compiled once in the image (/opt/passk/ocaml/passk_wire.cmo): a judge links it to call the candidate's
   function, a candidate links it to serve that function. It holds none of the tests and none of the model's code.

   Values are typed: a codec (['a codec]) is built by sandbox/languages/ocaml.py from the prompt's signature, and
   a receiver rebuilds exactly that type from data, refusing any other tag. OCaml's values cross as:

     int -> l (64 bits; one OCaml's 63-bit int cannot hold is refused)   float -> d    bool -> F / T
     char -> c (its byte)   string -> s (its bytes)   unit -> n   'a list, 'a array -> A   'a option -> N / Y
     tuples -> P

   Descriptors: the judge writes calls on 4, reads answers on 5 and reports on 3; the candidate reads calls on 3
   and answers on 4 (values.py). *)

exception Malformed of string

let malformed why = raise (Malformed why)

(* ------------------------------------------------------------------ bytes *)

type reader = { data : string; mutable at : int }

let reader data = { data; at = 0 }

let take r n =
  if n < 0 || r.at + n > String.length r.data then malformed "truncated";
  let chunk = String.sub r.data r.at n in
  r.at <- r.at + n;
  chunk

let tag r = (take r 1).[0]

let u32 r =
  let bytes = take r 4 in
  Int32.to_int (String.get_int32_be bytes 0) land 0xFFFFFFFF

let finish r = if r.at <> String.length r.data then malformed "trailing bytes"

let add_u32 b n = Buffer.add_int32_be b (Int32.of_int n)

let add_bytes b s =
  add_u32 b (String.length s);
  Buffer.add_string b s

let expect r wanted what =
  let got = tag r in
  if got <> wanted then malformed (Printf.sprintf "expected %s, got the tag %C" what got)

(* ------------------------------------------------------------------ codecs *)

type 'a codec = { encode : Buffer.t -> 'a -> unit; decode : reader -> 'a }

let int = {
  encode = (fun b n -> Buffer.add_char b 'l'; Buffer.add_int64_be b (Int64.of_int n));
  decode = (fun r ->
    expect r 'l' "an int";
    let n = String.get_int64_be (take r 8) 0 in
    if Int64.of_int (Int64.to_int n) <> n then malformed "an integer OCaml's int cannot hold";
    Int64.to_int n);
}

let float = {
  encode = (fun b x -> Buffer.add_char b 'd'; Buffer.add_int64_be b (Int64.bits_of_float x));
  decode = (fun r -> expect r 'd' "a float"; Int64.float_of_bits (String.get_int64_be (take r 8) 0));
}

let bool = {
  encode = (fun b x -> Buffer.add_char b (if x then 'T' else 'F'));
  decode = (fun r -> match tag r with 'T' -> true | 'F' -> false | t -> malformed (Printf.sprintf "expected a bool, got the tag %C" t));
}

let char = {
  encode = (fun b c -> Buffer.add_char b 'c'; add_u32 b (Char.code c));
  decode = (fun r ->
    expect r 'c' "a char";
    let code = u32 r in
    if code > 255 then malformed "a character OCaml's char cannot hold";
    Char.chr code);
}

let string = {
  encode = (fun b s -> Buffer.add_char b 's'; add_bytes b s);
  decode = (fun r -> expect r 's' "a string"; take r (u32 r));
}

let unit = {
  encode = (fun b () -> Buffer.add_char b 'n');
  decode = (fun r -> expect r 'n' "unit");
}

let count r =
  let n = u32 r in
  (* Every value takes one byte at least: a count past the end is refused before anything is built. *)
  if n > String.length r.data - r.at then malformed "truncated";
  n

let list item = {
  encode = (fun b items -> Buffer.add_char b 'A'; add_u32 b (List.length items); List.iter (item.encode b) items);
  decode = (fun r ->
    expect r 'A' "a list";
    let n = count r in
    List.init n (fun _ -> item.decode r));
}

let array item = {
  encode = (fun b items -> Buffer.add_char b 'A'; add_u32 b (Array.length items); Array.iter (item.encode b) items);
  decode = (fun r ->
    expect r 'A' "an array";
    let n = count r in
    Array.init n (fun _ -> item.decode r));
}

let option item = {
  encode = (fun b x -> match x with None -> Buffer.add_char b 'N' | Some v -> Buffer.add_char b 'Y'; item.encode b v);
  decode = (fun r ->
    match tag r with
    | 'N' -> None
    | 'Y' -> Some (item.decode r)
    | t -> malformed (Printf.sprintf "expected an option, got the tag %C" t));
}

let tuple r n =
  expect r 'P' "a tuple";
  if u32 r <> n then malformed (Printf.sprintf "a tuple of another size than %d" n)

let start_tuple b n = Buffer.add_char b 'P'; add_u32 b n

let tuple2 c1 c2 = {
  encode = (fun b (x1, x2) -> start_tuple b 2; c1.encode b x1; c2.encode b x2);
  decode = (fun r -> tuple r 2; let x1 = c1.decode r in let x2 = c2.decode r in (x1, x2));
}

let tuple3 c1 c2 c3 = {
  encode = (fun b (x1, x2, x3) -> start_tuple b 3; c1.encode b x1; c2.encode b x2; c3.encode b x3);
  decode = (fun r -> tuple r 3; let x1 = c1.decode r in let x2 = c2.decode r in let x3 = c3.decode r in (x1, x2, x3));
}

let tuple4 c1 c2 c3 c4 = {
  encode = (fun b (x1, x2, x3, x4) -> start_tuple b 4; c1.encode b x1; c2.encode b x2; c3.encode b x3; c4.encode b x4);
  decode = (fun r ->
    tuple r 4;
    let x1 = c1.decode r in let x2 = c2.decode r in let x3 = c3.decode r in let x4 = c4.decode r in (x1, x2, x3, x4));
}

let tuple5 c1 c2 c3 c4 c5 = {
  encode = (fun b (x1, x2, x3, x4, x5) ->
    start_tuple b 5; c1.encode b x1; c2.encode b x2; c3.encode b x3; c4.encode b x4; c5.encode b x5);
  decode = (fun r ->
    tuple r 5;
    let x1 = c1.decode r in let x2 = c2.decode r in let x3 = c3.decode r in let x4 = c4.decode r in
    let x5 = c5.decode r in (x1, x2, x3, x4, x5));
}

(* One value's bytes, and the one value bytes hold (for the codec's tests). *)
let encode codec x = let b = Buffer.create 64 in codec.encode b x; Buffer.contents b

let decode codec data = let r = reader data in let x = codec.decode r in finish r; x

(* A value of the codec's type read from `r` (the server's arguments). *)
let read codec r = codec.decode r

(* An argument of a call: its codec and its value. *)
let arg codec x b = codec.encode b x

(* ------------------------------------------------------------------ framing *)

let descriptor (n : int) : Unix.file_descr = Obj.magic n

let max_message = 1 lsl 30

let rec write_all fd s at =
  if at < String.length s then write_all fd s (at + Unix.write_substring fd s at (String.length s - at))

(* One framed message; false if the other end is gone. *)
let send fd message =
  let b = Buffer.create (String.length message + 4) in
  add_u32 b (String.length message);
  Buffer.add_string b message;
  try write_all fd (Buffer.contents b) 0; true with Unix.Unix_error _ -> false

(* Exactly n bytes, or None at an end of input before the first; Malformed at one after it. *)
let read_exactly fd n =
  let buffer = Bytes.create n in
  let rec go at =
    if at = n then Some (Bytes.unsafe_to_string buffer)
    else
      match Unix.read fd buffer at (n - at) with
      | 0 -> if at = 0 then None else malformed "a message cut short"
      | k -> go (at + k)
      | exception Unix.Unix_error (Unix.EINTR, _, _) -> go at
      | exception Unix.Unix_error _ -> if at = 0 then None else malformed "a message cut short"
  in
  go 0

(* The next message, or None once the other end closed its channel. *)
let receive fd =
  match read_exactly fd 4 with
  | None -> None
  | Some header ->
    let n = Int32.to_int (String.get_int32_be header 0) land 0xFFFFFFFF in
    if n > max_message then malformed "a message longer than passk's limit";
    if n = 0 then Some ""
    else match read_exactly fd n with None -> malformed "a message cut short" | some -> some

(* True if `fd` has data within `seconds` (one byte of it is consumed); an end of input is not data. *)
let data_waiting fd seconds =
  match Unix.select [fd] [] [] seconds with
  | [], _, _ -> false
  | _ -> (try Unix.read fd (Bytes.create 1) 0 1 > 0 with Unix.Unix_error _ -> false)
  | exception Unix.Unix_error _ -> false

(* ------------------------------------------------------------------ the judge's side *)

module Judge = struct
  let report = descriptor 3
  let calls = descriptor 4
  let replies = descriptor 5

  (* How long failing tests wait for the candidate to end once its calls are closed (seconds). *)
  let surplus_wait_s = 0.1

  let write_report record = try write_all report record 0 with Unix.Unix_error _ -> ()

  (* Writes the judge's one outcome record and ends the tests there. *)
  let end_with record =
    flush stdout;
    flush stderr;
    write_report record;
    Stdlib.exit 1

  let check_unasked moment =
    if data_waiting replies 0.0 then
      end_with ("FLAG out_of_turn\nBROKEN the program's process wrote on its channel to the tests unasked, " ^ moment)

  (* Calls the candidate's function `name` with `args`; returns its value rebuilt by `returns`. *)
  let call name args returns =
    check_unasked ("before the call of " ^ name ^ "()");
    let b = Buffer.create 64 in
    Buffer.add_char b 'C';
    add_bytes b name;
    add_u32 b (List.length args);
    List.iter (fun encode_arg -> encode_arg b) args;
    if not (send calls (Buffer.contents b)) then end_with "ENDED";
    match receive replies with
    | exception Malformed why -> end_with ("BROKEN " ^ name ^ "(): " ^ why)
    | None -> end_with "ENDED"
    | Some reply ->
      match
        let r = reader reply in
        match tag r with
        | 'R' -> let value = returns.decode r in finish r; `Returned value
        | 'E' -> let kind = take r (u32 r) in let message = take r (u32 r) in finish r; `Raised (kind, message)
        | 'U' -> let kind = take r (u32 r) in finish r; `Unsendable kind
        | t -> malformed (Printf.sprintf "not an answer (a message of kind %C)" t)
      with
      | exception Malformed why -> end_with ("BROKEN " ^ name ^ "(): " ^ why)
      | `Returned value -> value
      | `Raised (kind, message) -> end_with ("RAISED " ^ kind ^ ": " ^ message)
      | `Unsendable kind -> end_with ("ERROR " ^ name ^ "() returned a value passk cannot carry to the tests (" ^ kind ^ ")")

  (* Failing tests end with an uncaught exception (an Assert_failure): before OCaml reports it as it would in one
     process (status 2), data the candidate sent unasked is looked for (the calls are closed, so an honest server
     ends; anything arriving before that, or within surplus_wait_s, is flagged). *)
  let uncaught exn _backtrace =
    (try Unix.close calls with Unix.Unix_error _ -> ());
    if data_waiting replies surplus_wait_s then write_report "FLAG out_of_turn\n";
    flush stdout;
    let shown = match exn with
      | Assert_failure (file, line, column) -> Printf.sprintf "Assert_failure(%S, %d, %d)" file line column
      | _ -> Printexc.to_string exn in
    Printf.eprintf "Fatal error: exception %s\n%!" shown;
    Stdlib.exit 2

  (* The first line of a judge: a closed candidate is an error to write to, not a signal. *)
  let start () =
    Sys.set_signal Sys.sigpipe Sys.Signal_ignore;
    Printexc.set_uncaught_exception_handler uncaught

  (* After the tests returned: the only way to a pass. *)
  let pass () =
    check_unasked "after the last answer";
    flush stdout;
    flush stderr;
    (try write_all report "PASS" 0 with Unix.Unix_error _ -> Stdlib.exit 1);
    Stdlib.exit 0

  (* The judge of a problem whose own code does not compile (the compiler's words in `log`): every sample ends as
     an error saying so, as every sample failed under the original harness. *)
  let does_not_compile log =
    let lines = String.split_on_char '\n' log in
    let first = try List.find (fun line -> String.length line >= 5 && String.sub line 0 5 = "Error") lines
      with Not_found -> "(no diagnostic)" in
    end_with ("ERROR the problem's own code does not compile with this toolchain: " ^ first)
end

(* ------------------------------------------------------------------ the candidate's side *)

module Server = struct
  let calls = descriptor 3
  let replies = descriptor 4

  (* The call must carry exactly `n` arguments. *)
  let arguments r n = if u32 r <> n then malformed "a call with another number of arguments"

  let exception_message exn =
    match exn with
    | Failure message | Invalid_argument message | Sys_error message -> message
    | _ -> Printexc.to_string exn

  (* Runs the call: `R <value>`, or `E <class> <message>` for an exception it raised. *)
  let answer returns call =
    match call () with
    | value -> let b = Buffer.create 64 in Buffer.add_char b 'R'; returns.encode b value; Buffer.contents b
    | exception exn ->
      let b = Buffer.create 64 in
      Buffer.add_char b 'E';
      add_bytes b (Printexc.exn_slot_name exn);
      add_bytes b (exception_message exn);
      Buffer.contents b

  (* Answers calls until the judge closes its end (then the process ends with status 0). *)
  let serve (callables : (string * (reader -> string)) list) =
    Sys.set_signal Sys.sigpipe Sys.Signal_ignore;
    let rec loop () =
      match receive calls with
      | exception Malformed _ -> Stdlib.exit 0
      | None -> Stdlib.exit 0
      | Some message ->
        let reply =
          try
            let r = reader message in
            if tag r <> 'C' then malformed "not a call";
            let name = take r (u32 r) in
            match List.assoc_opt name callables with
            | Some serve_one -> serve_one r
            | None -> malformed "a call of a function the program does not serve"
          with Malformed why ->
            (* Only passk's judge writes calls: one the server cannot read is passk's fault, not the program's. *)
            prerr_endline ("passk: the server could not read a call: " ^ why);
            Stdlib.exit 70
        in
        if send replies reply then loop () else Stdlib.exit 0
    in
    loop ()
end
