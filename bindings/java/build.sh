#!/usr/bin/env bash
# Builds the Java binding: the JNI library (cargo, release) and the dev.filtervm classes (javac)
# into one jar, target/java/filtervm.jar, which carries the library (/native/libfiltervm_jni.so)
# and loads it from there. No Maven or Gradle: the JDK and cargo only.
#
#   bash bindings/java/build.sh            # prints the jar's path
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/target/java"
cargo build --release --quiet --manifest-path "$here/Cargo.toml"
rm -rf "$out/classes"
mkdir -p "$out/classes/native"
javac --release 17 -Xlint:all -Werror -d "$out/classes" $(find "$here/java/main" -name '*.java' | sort)
cp "$here/target/release/libfiltervm_jni.so" "$out/classes/native/"
jar --create --file "$out/filtervm.jar" -C "$out/classes" .
echo "$out/filtervm.jar"
