// Run once when the Scala image is built, with -XX:ArchiveClassesAtExit: the Scala library's classes a judge and a
// candidate usually load (collections, strings, ranges, options, tuples, numbers, the conversions of `Any`) go into
// the runs' class-data-sharing archive, so neither JVM of a sample parses them again.
package passk

object Sample {
  def main(args: Array[String]): Unit = {
    val words = "the quick brown fox".split(" ").toList
    val counts = scala.collection.mutable.Map[String, Long]()
    for (w <- words; c <- w) counts(c.toString) = counts.getOrElse(c.toString, 0L) + 1L
    val buffer = scala.collection.mutable.ListBuffer[Long]()
    val array = scala.collection.mutable.ArrayBuffer[Double]()
    (1L to 10L).foreach(i => buffer += i * i)
    (0 until 5).foreach(i => array += math.sqrt(i.toDouble))
    val sorted = buffer.toList.sortWith(_ > _).filter(_ % 2 == 0).map(_.toString).mkString(",")
    val pairs = words.zipWithIndex.map { case (w, i) => (w.reverse.toUpperCase, i.toLong) }.toMap
    val found: Option[Long] = pairs.get("EHT").orElse(Some(0L))
    val big = BigInt(2).pow(70) + BigInt("12345678901234567890")
    val text = new StringBuilder(sorted).append(f"${array.sum}%.3f").append(words.max).toString.trim
    val values = List[Any](1L, "s", 2.5, List(1L, 2L), Map("k" -> Some(3L)), (1L, "x"), big, 'c', true)
    val back = Dynamic.toScala(Dynamic.toJava(values))
    assert(back.asInstanceOf[List[Any]].length == values.length && text.nonEmpty && found.isDefined)
    println(Seq(counts.size, sorted.length, pairs.keys.toList.sorted.head, big.toString.length, back).mkString(" "))
  }
}
