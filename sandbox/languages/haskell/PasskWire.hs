{-# LANGUAGE FlexibleInstances, ScopedTypeVariables, UndecidableInstances #-}
-- passk's value wire for Haskell (the rule: sandbox/runtime/values.py), the judge's calls and the candidate's
-- server. Compiled once in the image (/opt/passk/haskell/PasskWire.{hi,o}): a judge imports it to call the
-- candidate's function, a candidate's server imports it to serve that function. It holds none of the tests and none
-- of the model's code.
--
-- Values are typed: the class Wire rebuilds exactly the type the signature names, refusing any other tag.
--
--   Int -> l    Integer -> z    Double -> d    Float -> f    Bool -> F / T    Char -> c (its code point)
--   String -> s (UTF-8; a lone surrogate as its own 3-byte form)    () -> n    [a] -> A    Maybe a -> N / Y
--   tuples -> P
--
-- Descriptors: the judge writes calls on 4, reads answers on 5 and reports on 3; the candidate reads calls on 3
-- and answers on 4 (values.py).
module PasskWire
  ( Wire (..), Parser, Malformed (..), Arg, arg, call, pass, serve, handler, encodeValue, decodeValue, doesNotCompile
  ) where

import Control.Exception
import Control.Monad (replicateM, when, unless)
import Data.Bits
import qualified Data.ByteString as B
import qualified Data.ByteString.Builder as BB
import qualified Data.ByteString.Lazy as BL
import Data.Char (chr, ord)
import Data.Int (Int64)
import Data.IORef
import Data.List (isInfixOf)
import Data.Typeable (typeOf)
import Data.Word (Word8, Word64)
import GHC.Conc (setUncaughtExceptionHandler)
import GHC.Float (castDoubleToWord64, castFloatToWord32, castWord32ToFloat, castWord64ToDouble)
import System.Exit (exitWith, ExitCode (..))
import System.IO
import System.IO.Unsafe (unsafePerformIO)
import System.Posix.IO (fdToHandle)
import System.Posix.Types (Fd (..))

-- ------------------------------------------------------------------ reading

newtype Malformed = Malformed String deriving Show

instance Exception Malformed

newtype Parser a = Parser { runParser :: B.ByteString -> Either String (a, B.ByteString) }

instance Functor Parser where
  fmap f (Parser p) = Parser $ \s -> case p s of
    Left e -> Left e
    Right (a, rest) -> Right (f a, rest)

instance Applicative Parser where
  pure a = Parser $ \s -> Right (a, s)
  Parser pf <*> Parser pa = Parser $ \s -> case pf s of
    Left e -> Left e
    Right (f, rest) -> case pa rest of
      Left e -> Left e
      Right (a, rest') -> Right (f a, rest')

instance Monad Parser where
  Parser p >>= f = Parser $ \s -> case p s of
    Left e -> Left e
    Right (a, rest) -> runParser (f a) rest

refuse :: String -> Parser a
refuse why = Parser $ \_ -> Left why

takeBytes :: Int -> Parser B.ByteString
takeBytes n = Parser $ \s -> if n < 0 || B.length s < n then Left "truncated" else Right (B.splitAt n s)

byte :: Parser Word8
byte = B.head <$> takeBytes 1

beWord :: B.ByteString -> Word64
beWord = B.foldl' (\acc b -> acc `shiftL` 8 .|. fromIntegral b) 0

u32 :: Parser Int
u32 = fromIntegral . beWord <$> takeBytes 4

remaining :: Parser Int
remaining = Parser $ \s -> Right (B.length s, s)

-- A count of values: each takes a byte at least, so one past the end is refused before anything is built.
count :: Parser Int
count = do
  n <- u32
  left <- remaining
  when (n > left) (refuse "truncated")
  pure n

expect :: Char -> String -> Parser ()
expect wanted what = do
  got <- byte
  unless (got == fromIntegral (ord wanted)) $
    refuse ("expected " ++ what ++ ", got the tag " ++ show (chr (fromIntegral got)))

finished :: Parser ()
finished = do
  left <- remaining
  unless (left == 0) (refuse "trailing bytes")

-- ------------------------------------------------------------------ writing

tag :: Char -> BB.Builder
tag = BB.word8 . fromIntegral . ord

word32 :: Int -> BB.Builder
word32 = BB.word32BE . fromIntegral

bytes :: B.ByteString -> BB.Builder
bytes b = word32 (B.length b) <> BB.byteString b

build :: BB.Builder -> B.ByteString
build = BL.toStrict . BB.toLazyByteString

-- ------------------------------------------------------------------ the codec

class Wire a where
  encode :: a -> BB.Builder
  decode :: Parser a
  -- How a list of this type crosses (a String is s, any other list A), as Show's showList.
  encodeList :: [a] -> BB.Builder
  encodeList items = tag 'A' <> word32 (length items) <> foldMap encode items
  decodeList :: Parser [a]
  decodeList = do
    expect 'A' "a list"
    n <- count
    replicateM n decode

instance Wire a => Wire [a] where
  encode = encodeList
  decode = decodeList

instance Wire Int where
  encode n = tag 'l' <> BB.int64BE (fromIntegral n)
  decode = do
    expect 'l' "an Int"
    fromIntegral . (fromIntegral :: Word64 -> Int64) . beWord <$> takeBytes 8

instance Wire Integer where
  encode n = tag 'z' <> bytes (B.pack (twos n))
  decode = do
    expect 'z' "an Integer"
    raw <- takeBytes =<< u32
    pure $ if B.null raw then 0 else
      let unsigned = B.foldl' (\acc b -> acc * 256 + toInteger b) 0 raw
      in if B.head raw >= 128 then unsigned - bit (8 * B.length raw) else unsigned

-- Two's complement, big-endian, in (bit length of the magnitude + 8) // 8 bytes, as values.py sizes it.
twos :: Integer -> [Word8]
twos 0 = []
twos n = [fromInteger ((n `shiftR` (8 * i)) .&. 255) | i <- [size - 1, size - 2 .. 0]]
  where
    size = (bitLength + 8) `div` 8
    bitLength = length (takeWhile (/= 0) (iterate (`shiftR` 1) (abs n)))

instance Wire Double where
  encode x = tag 'd' <> BB.word64BE (castDoubleToWord64 x)
  decode = expect 'd' "a Double" >> castWord64ToDouble . beWord <$> takeBytes 8

instance Wire Float where
  encode x = tag 'f' <> BB.word32BE (castFloatToWord32 x)
  decode = expect 'f' "a Float" >> castWord32ToFloat . fromIntegral . beWord <$> takeBytes 4

instance Wire Bool where
  encode b = tag (if b then 'T' else 'F')
  decode = do
    got <- byte
    case chr (fromIntegral got) of
      'T' -> pure True
      'F' -> pure False
      other -> refuse ("expected a Bool, got the tag " ++ show other)

instance Wire () where
  encode () = tag 'n'
  decode = expect 'n' "()"

instance Wire Char where
  encode c = tag 'c' <> word32 (ord c)
  decode = do
    expect 'c' "a Char"
    code <- u32
    when (code > 0x10FFFF) (refuse "a character past Unicode")
    pure (chr code)
  encodeList s = tag 's' <> bytes (B.pack (concatMap utf8Bytes s))
  decodeList = do
    expect 's' "a String"
    raw <- takeBytes =<< u32
    either refuse pure (fromUtf8 (B.unpack raw))

utf8Bytes :: Char -> [Word8]
utf8Bytes c
  | n < 0x80 = [fromIntegral n]
  | n < 0x800 = [0xC0 .|. hi 6, cont 0]
  | n < 0x10000 = [0xE0 .|. hi 12, cont 6, cont 0]
  | otherwise = [0xF0 .|. hi 18, cont 12, cont 6, cont 0]
  where
    n = ord c
    hi k = fromIntegral (n `shiftR` k)
    cont k = 0x80 .|. fromIntegral ((n `shiftR` k) .&. 0x3F)

-- UTF-8 (a surrogate's own 3-byte form accepted, as a String can hold one); anything else is refused.
fromUtf8 :: [Word8] -> Either String String
fromUtf8 [] = Right []
fromUtf8 (b : rest)
  | b < 0x80 = (chr (fromIntegral b) :) <$> fromUtf8 rest
  | b .&. 0xE0 == 0xC0 = multi 1 (fromIntegral b .&. 0x1F) 0x80
  | b .&. 0xF0 == 0xE0 = multi 2 (fromIntegral b .&. 0x0F) 0x800
  | b .&. 0xF8 == 0xF0 = multi 3 (fromIntegral b .&. 0x07) 0x10000
  | otherwise = Left "a string that is not UTF-8"
  where
    multi k lead least
      | length following < k || any (\x -> x .&. 0xC0 /= 0x80) following = Left "a string that is not UTF-8"
      | code < least || code > 0x10FFFF = Left "a string that is not UTF-8"
      | otherwise = (chr code :) <$> fromUtf8 (drop k rest)
      where
        following = take k rest
        code = foldl (\acc x -> acc `shiftL` 6 .|. (fromIntegral x .&. 0x3F)) lead following :: Int

instance Wire a => Wire (Maybe a) where
  encode Nothing = tag 'N'
  encode (Just x) = tag 'Y' <> encode x
  decode = do
    got <- byte
    case chr (fromIntegral got) of
      'N' -> pure Nothing
      'Y' -> Just <$> decode
      other -> refuse ("expected a Maybe, got the tag " ++ show other)

tuple :: Int -> Parser ()
tuple n = do
  expect 'P' "a tuple"
  size <- u32
  unless (size == n) (refuse ("a tuple of another size than " ++ show n))

instance (Wire a, Wire b) => Wire (a, b) where
  encode (a, b) = tag 'P' <> word32 2 <> encode a <> encode b
  decode = tuple 2 >> (,) <$> decode <*> decode

instance (Wire a, Wire b, Wire c) => Wire (a, b, c) where
  encode (a, b, c) = tag 'P' <> word32 3 <> encode a <> encode b <> encode c
  decode = tuple 3 >> (,,) <$> decode <*> decode <*> decode

instance (Wire a, Wire b, Wire c, Wire d) => Wire (a, b, c, d) where
  encode (a, b, c, d) = tag 'P' <> word32 4 <> encode a <> encode b <> encode c <> encode d
  decode = tuple 4 >> (,,,) <$> decode <*> decode <*> decode <*> decode

instance (Wire a, Wire b, Wire c, Wire d, Wire e) => Wire (a, b, c, d, e) where
  encode (a, b, c, d, e) = tag 'P' <> word32 5 <> encode a <> encode b <> encode c <> encode d <> encode e
  decode = tuple 5 >> (,,,,) <$> decode <*> decode <*> decode <*> decode <*> decode

-- One value's bytes, and the one value bytes hold (for the codec's tests).
encodeValue :: Wire a => a -> B.ByteString
encodeValue = build . encode

decodeValue :: Wire a => B.ByteString -> Either String a
decodeValue raw = fst <$> runParser (decode <* finished) raw

-- ------------------------------------------------------------------ framing

handleOf :: Int -> Handle
handleOf n = unsafePerformIO $ do
  h <- fdToHandle (Fd (fromIntegral n))
  hSetBinaryMode h True
  hSetBuffering h NoBuffering
  pure h

maxMessage :: Int
maxMessage = 1 `shiftL` 30

-- One framed message; False if the other end is gone.
send :: Handle -> B.ByteString -> IO Bool
send h message = do
  sent <- try (B.hPut h (build (word32 (B.length message) <> BB.byteString message)) >> hFlush h)
  pure (either (\(_ :: IOException) -> False) (const True) sent)

-- The next message, or Nothing once the other end closed its channel (Malformed: one cut short).
receive :: Handle -> IO (Maybe B.ByteString)
receive h = do
  header <- either (\(_ :: IOException) -> B.empty) id <$> try (B.hGet h 4)
  if B.null header then pure Nothing else do
    when (B.length header < 4) (throwIO (Malformed "a message cut short"))
    let n = fromIntegral (beWord header)
    when (n > maxMessage) (throwIO (Malformed "a message longer than passk's limit"))
    body <- either (\(_ :: IOException) -> B.empty) id <$> try (B.hGet h n)
    when (B.length body < n) (throwIO (Malformed "a message cut short"))
    pure (Just body)

-- True if data waits on `h` within `ms` milliseconds (one byte of it is consumed); an end of input is not data.
dataWaiting :: Handle -> Int -> IO Bool
dataWaiting h ms = do
  ready <- try (hWaitForInput h ms)
  case ready of
    Right True -> either (\(_ :: IOException) -> False) (not . B.null) <$> try (B.hGetNonBlocking h 1)
    Right False -> pure False
    Left (_ :: IOException) -> pure False

-- ------------------------------------------------------------------ the judge's side

reportH, callsH, repliesH :: Handle
reportH = handleOf 3
{-# NOINLINE reportH #-}
callsH = handleOf 4
{-# NOINLINE callsH #-}
repliesH = handleOf 5
{-# NOINLINE repliesH #-}

-- How long failing tests wait for the candidate to end once its calls are closed (milliseconds).
surplusWaitMs :: Int
surplusWaitMs = 100

writeReport :: String -> IO ()
writeReport record = do
  _ <- try (B.hPut reportH (build (BB.stringUtf8 record)) >> hFlush reportH) :: IO (Either IOException ())
  pure ()

-- Writes the judge's one outcome record and ends the tests there.
endWith :: String -> IO a
endWith record = do
  hFlush stdout
  hFlush stderr
  writeReport record
  exitWith (ExitFailure 1)

checkUnasked :: String -> IO ()
checkUnasked moment = do
  waiting <- dataWaiting repliesH 0
  when waiting $
    endWith ("FLAG out_of_turn\nBROKEN the program's process wrote on its channel to the tests unasked, " ++ moment)

started :: IORef Bool
started = unsafePerformIO (newIORef False)
{-# NOINLINE started #-}

-- Failing tests end with an uncaught exception (`error "assertion failed"`): before the runtime reports it as it
-- would in one process (status 1), data the candidate sent unasked is looked for (the calls are closed, so an honest
-- server ends; anything arriving before that, or within surplusWaitMs, is flagged).
start :: IO ()
start = do
  first <- atomicModifyIORef' started (\done -> (True, not done))
  when first $ setUncaughtExceptionHandler $ \exn -> do
    _ <- try (hClose callsH) :: IO (Either IOException ())
    surplus <- dataWaiting repliesH surplusWaitMs
    when surplus (writeReport "FLAG out_of_turn\n")
    hFlush stdout
    hPutStrLn stderr ("judge: " ++ displayException exn)

-- An argument of a call: its bytes.
newtype Arg = Arg BB.Builder

arg :: Wire a => a -> Arg
arg = Arg . encode

-- Calls the candidate's function `name` with `args`; returns its value rebuilt as the signature's type.
call :: forall r. Wire r => String -> [Arg] -> r
call name args = unsafePerformIO $ do
  start
  -- The arguments are the tests' values: one that raises does so here, in the tests, as in one process.
  payload <- evaluate (build (mconcat [a | Arg a <- args]))
  checkUnasked ("before the call of " ++ name ++ "()")
  let message = build (tag 'C' <> bytes (build (BB.stringUtf8 name)) <> word32 (length args)) <> payload
  ok <- send callsH message
  unless ok (endWith "ENDED")
  answered <- try (receive repliesH)
  case answered of
    Left (Malformed why) -> endWith ("BROKEN " ++ name ++ "(): " ++ why)
    Right Nothing -> endWith "ENDED"
    Right (Just raw) -> case runParser answer raw of
      Left why -> endWith ("BROKEN " ++ name ++ "(): " ++ why)
      Right (Right value, _) -> pure value
      Right (Left record, _) -> endWith record
  where
    answer :: Parser (Either String r)
    answer = do
      kind <- byte
      case chr (fromIntegral kind) of
        'R' -> Right <$> decode <* finished
        'E' -> do
          cls <- takeBytes =<< u32
          msg <- takeBytes =<< u32
          finished
          pure (Left ("RAISED " ++ text cls ++ ": " ++ text msg))
        'U' -> do
          what <- takeBytes =<< u32
          finished
          pure (Left ("ERROR " ++ name ++ "() returned a value passk cannot carry to the tests (" ++ text what ++ ")"))
        other -> refuse ("not an answer (a message of kind " ++ show other ++ ")")
    text raw = either (const (show raw)) id (fromUtf8 (B.unpack raw))
{-# NOINLINE call #-}

-- After the tests returned: the only way to a pass.
pass :: IO ()
pass = do
  checkUnasked "after the last answer"
  hFlush stdout
  hFlush stderr
  written <- try (B.hPut reportH (build (BB.string7 "PASS")) >> hFlush reportH)
  case written of
    Left (_ :: IOException) -> exitWith (ExitFailure 1)
    Right () -> exitWith ExitSuccess

-- ------------------------------------------------------------------ the candidate's side

-- One callable: its arguments' decoder, then the reply it makes.
class Callable f where
  invoke :: f -> Parser (IO B.ByteString)

instance {-# OVERLAPPABLE #-} Wire r => Callable r where
  invoke value = pure (reply value)

instance {-# OVERLAPPING #-} (Wire a, Callable f) => Callable (a -> f) where
  invoke f = do
    a <- decode
    invoke (f a)

-- `R <value>`, or `E <class> <message>` for an exception evaluating it raised (the whole value is evaluated).
reply :: Wire r => r -> IO B.ByteString
reply value = do
  encoded <- try (evaluate (build (encode value)) >>= \b -> B.length b `seq` pure b)
  case encoded of
    Right b -> pure (B.cons (fromIntegral (ord 'R')) b)
    -- An exit (unsafePerformIO exitWith in the function) ends the process, as it would end one program.
    Left problem | Just (code :: ExitCode) <- fromException problem -> throwIO code
    Left (SomeException e) -> pure $
      let cls = case fromException (SomeException e) of
            Just HeapOverflow -> "HeapOverflow"
            Just StackOverflow -> "StackOverflow"
            _ -> show (typeOf e)
      in build (tag 'E' <> bytes (build (BB.stringUtf8 cls)) <> bytes (build (BB.stringUtf8 (message e))))
  where
    message e = takeWhile (/= '\n') (displayException e)

-- A function of `arity` arguments, served under its name.
handler :: Callable f => Int -> f -> Parser (IO B.ByteString)
handler arity f = do
  n <- u32
  unless (n == arity) (refuse "a call with another number of arguments")
  action <- invoke f
  finished
  pure action

-- Answers calls until the judge closes its end (then the process ends with status 0).
serve :: [(String, Parser (IO B.ByteString))] -> IO ()
serve callables = loop
  where
    callsIn = handleOf 3
    repliesOut = handleOf 4
    loop = do
      message <- try (receive callsIn)
      case message of
        Left (Malformed _) -> exitWith ExitSuccess
        Right Nothing -> exitWith ExitSuccess
        Right (Just raw) -> do
          let request = do
                expect 'C' "a call"
                name <- takeBytes =<< u32
                case lookup (either (const "") id (fromUtf8 (B.unpack name))) callables of
                  Just serveOne -> serveOne
                  Nothing -> refuse "a call of a function the program does not serve"
          case runParser request raw of
            Left why -> do
              -- Only passk's judge writes calls: one the server cannot read is passk's fault, not the program's.
              hPutStrLn stderr ("passk: the server could not read a call: " ++ why)
              exitWith (ExitFailure 70)
            Right (action, _) -> do
              answer <- action
              ok <- send repliesOut answer
              if ok then loop else exitWith ExitSuccess

-- The judge of a problem whose own code does not compile (GHC's words in `log`): every sample ends as an error
-- saying so, as every sample failed under the original harness.
doesNotCompile :: String -> IO ()
doesNotCompile diagnostics = endWith ("ERROR the problem's own code does not compile with this toolchain: " ++ firstError)
  where
    firstError = case dropWhile (not . isError) (lines diagnostics) of
      (_ : message : _) -> unwords (words message)
      _ -> "(no diagnostic)"
    isError line = ": error" `isInfixOf` line
