package dev.filtervm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** The conformance vectors (conformance/FORMAT.md) and the situations fixture, read from the repository. */
final class Vectors {
    private Vectors() {}

    /** The repository root: the system property {@code filtervm.root} (set by ci.sh). */
    static Path root() {
        return Path.of(System.getProperty("filtervm.root", "../.."));
    }

    /** One conformance case, its members kept as the exact text the vector wrote. */
    record Vector(String file, String id, String dialect, String expect, String error,
            String policyText, String optionsText, String messageText) {
        /** The options as text, or null for the defaults. */
        String options() {
            return optionsText == null || optionsText.equals("null") ? null : optionsText;
        }

        @Override
        public String toString() {
            return file + ":" + id;
        }
    }

    /** Every case of conformance/vectors/*.jsonl and conformance/vectors/local/*.jsonl. */
    static List<Vector> all() throws IOException {
        Path dir = root().resolve("conformance/vectors");
        List<Path> files = new ArrayList<>();
        files.addAll(jsonl(dir));
        files.addAll(jsonl(dir.resolve("local")));
        List<Vector> out = new ArrayList<>();
        for (Path f : files) {
            String name = dir.relativize(f).toString();
            for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                if (line.isBlank()) {
                    continue;
                }
                Map<String, String> raw = Json.rawMembers(line);
                @SuppressWarnings("unchecked")
                Map<String, Object> c = (Map<String, Object>) Json.parse(line);
                out.add(new Vector(name, (String) c.get("id"), (String) c.get("dialect"), (String) c.get("expect"),
                        (String) c.get("error"), raw.get("policy"), raw.get("options"), raw.get("message")));
            }
        }
        return out;
    }

    /** The cases of one file under conformance/vectors. */
    static List<Vector> file(String name) throws IOException {
        List<Vector> out = new ArrayList<>();
        for (Vector v : all()) {
            if (v.file().equals(name)) {
                out.add(v);
            }
        }
        return out;
    }

    private static List<Path> jsonl(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(".jsonl")).sorted().toList();
        }
    }

    /** The lines of tests/situations.jsonl, parsed. */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> situations() throws IOException {
        List<Map<String, Object>> out = new ArrayList<>();
        for (String line : Files.readAllLines(root().resolve("tests/situations.jsonl"), StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                Map<String, Object> c = (Map<String, Object>) Json.parse(line);
                c.put("policy_text", Json.rawMembers(line).get("policy"));
                c.put("options_text", Json.rawMembers(line).get("options"));
                out.add(c);
            }
        }
        return out;
    }
}
