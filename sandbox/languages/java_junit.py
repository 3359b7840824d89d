"""SandboxFusion's `junit` on /run_code: the program is a Java file of JUnit 5 tests, compiled against JUnit's
console launcher (Debian's junit5) and run by it over the program's classes; it passes when every test passes
(the launcher exits 1 when one fails). A /run_code mode of Java, in an image of its own (Java's and JUnit's),
not a language for datasets."""

import dataclasses

from sandbox.languages.java import CLASSPATH, JVM_FLAGS, LANGUAGE as JAVA, OPEN_IO, javac, without_public

JUNIT_JAR = "/usr/share/java/junit-platform-console-standalone.jar"

LANGUAGE = dataclasses.replace(
    JAVA,
    name="java-junit",
    title="Java (JUnit 5)",
    packages=(*JAVA.packages, "junit5"),
    # Any class name compiles as Main.java; JUnit runs package-private test classes.
    stdio_program=without_public,
    compile=javac("Main.java", classpath=f"{CLASSPATH}:{JUNIT_JAR}"),
    # The launcher runs the tests in its own JVM (assertions on); Java's run archive is for another class path.
    run=("java", "-ea", *JVM_FLAGS, OPEN_IO, "-jar", JUNIT_JAR, "--disable-banner", "--details=tree",
         "--class-path", CLASSPATH, "--scan-class-path"),
    aliases=(),
    run_code_names=("junit",),
    variant_of="java",
    run_code_only=True,
    notes="SandboxFusion's `junit` on /run_code: the program's JUnit 5 tests run by JUnit's console launcher.",
)
