// passk's conversions of dynamic values (a signature's `Any`) between Scala's collections and the Java types
// Java's value wire carries (sandbox/languages/java/passk/Wire.java), by their runtime classes. Compiled into
// passk's jar when the Scala image is built; the judge's stub and the candidate's server call them.
package passk

object Dynamic {
  def toJava(value: Any): AnyRef = value match {
    case null => null
    case v: scala.collection.Map[_, _] =>
      val out = new java.util.LinkedHashMap[AnyRef, AnyRef](); v.foreach(p => out.put(toJava(p._1), toJava(p._2))); out
    case v: scala.collection.Seq[_] => val out = new java.util.ArrayList[AnyRef](); v.foreach(x => out.add(toJava(x))); out
    case v: Option[_] => if (v.isEmpty) java.util.Optional.empty[AnyRef]() else java.util.Optional.of[AnyRef](toJava(v.get))
    case v: BigInt => v.bigInteger
    case v: AnyRef => v
    case v => v.asInstanceOf[AnyRef]
  }

  def toScala(value: AnyRef): Any = value match {
    case v: java.util.Map[_, _] =>
      val out = scala.collection.mutable.ArrayBuffer[(Any, Any)]()
      val it = v.entrySet.iterator()
      while (it.hasNext) { val e = it.next(); out += ((toScala(e.getKey.asInstanceOf[AnyRef]), toScala(e.getValue.asInstanceOf[AnyRef]))) }
      scala.collection.immutable.Map[Any, Any](out: _*)
    case v: java.util.List[_] =>
      val out = scala.collection.mutable.ListBuffer[Any]()
      val it = v.iterator()
      while (it.hasNext) out += toScala(it.next().asInstanceOf[AnyRef])
      out.toList
    case v: java.util.Optional[_] => if (v.isPresent) Some(toScala(v.get.asInstanceOf[AnyRef])) else None
    case v: java.math.BigInteger => BigInt(v)
    case v => v
  }
}
