package dev.filtervm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader for the tests (the JDK has none): objects as {@code LinkedHashMap}, arrays
 * as {@code List}, strings, {@link Num} (a number's exact text), booleans and {@code null}; and
 * {@link #rawMembers}, each top-level member's exact text (so numbers such as 1e400 reach
 * filtervm unchanged, as the Python tests' {@code raw_members}).
 */
final class Json {
    /** A number, as its text. */
    record Num(String text) {
        @Override
        public String toString() {
            return text;
        }
    }

    private final String s;
    private int i;

    private Json(String s) {
        this.s = s;
    }

    static Object parse(String text) {
        Json p = new Json(text);
        Object v = p.value();
        p.ws();
        if (p.i != text.length()) {
            throw new IllegalArgumentException("trailing text at " + p.i);
        }
        return v;
    }

    /** The top-level members of a JSON object, each as the exact text of its value. */
    static Map<String, String> rawMembers(String text) {
        Json p = new Json(text);
        Map<String, String> out = new LinkedHashMap<>();
        p.ws();
        p.expect('{');
        p.ws();
        if (p.peek() == '}') {
            return out;
        }
        for (;;) {
            p.ws();
            String key = p.string();
            p.ws();
            p.expect(':');
            p.ws();
            int start = p.i;
            p.value();
            out.put(key, text.substring(start, p.i));
            p.ws();
            if (p.peek() == ',') {
                p.i++;
                continue;
            }
            p.expect('}');
            return out;
        }
    }

    /** Whether some object of the text names a member twice. */
    static boolean hasDuplicateMembers(String text) {
        Json p = new Json(text);
        p.duplicates = true;
        p.value();
        return p.foundDuplicate;
    }

    private boolean duplicates;
    private boolean foundDuplicate;

    private char peek() {
        return i < s.length() ? s.charAt(i) : '\0';
    }

    private void expect(char c) {
        if (peek() != c) {
            throw new IllegalArgumentException("expected " + c + " at " + i + " in " + s);
        }
        i++;
    }

    private void ws() {
        while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
    }

    private Object value() {
        ws();
        char c = peek();
        switch (c) {
            case '{': {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                ws();
                if (peek() == '}') {
                    i++;
                    return m;
                }
                for (;;) {
                    ws();
                    String k = string();
                    ws();
                    expect(':');
                    Object v = value();
                    if (m.containsKey(k)) {
                        foundDuplicate = true;
                    }
                    m.put(k, v);
                    ws();
                    if (peek() == ',') {
                        i++;
                        continue;
                    }
                    expect('}');
                    return m;
                }
            }
            case '[': {
                i++;
                List<Object> l = new ArrayList<>();
                ws();
                if (peek() == ']') {
                    i++;
                    return l;
                }
                for (;;) {
                    l.add(value());
                    ws();
                    if (peek() == ',') {
                        i++;
                        continue;
                    }
                    expect(']');
                    return l;
                }
            }
            case '"':
                return string();
            case 't':
                return word("true", Boolean.TRUE);
            case 'f':
                return word("false", Boolean.FALSE);
            case 'n':
                return word("null", null);
            default: {
                int start = i;
                while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                    i++;
                }
                if (start == i) {
                    throw new IllegalArgumentException("unexpected " + c + " at " + i);
                }
                return new Num(s.substring(start, i));
            }
        }
    }

    private Object word(String w, Object v) {
        if (!s.startsWith(w, i)) {
            throw new IllegalArgumentException("expected " + w + " at " + i);
        }
        i += w.length();
        return v;
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        for (;;) {
            char c = s.charAt(i++);
            if (c == '"') {
                return out.toString();
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = s.charAt(i++);
            switch (e) {
                case 'n': out.append('\n'); break;
                case 't': out.append('\t'); break;
                case 'r': out.append('\r'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'u':
                    out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                    i += 4;
                    break;
                default: out.append(e);
            }
        }
    }
}
