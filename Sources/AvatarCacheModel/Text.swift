#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// What the layers the `avatar-cache` front links (Model, Monograms, Support, Lookup) took
// from Foundation's full module, written against the standard library and libc, so that
// the front links FoundationEssentials alone: Foundation's module brings ICU and
// CoreFoundation, whose start-up and size were a fifth of a lookup process's time
// (docs/performance-notes.md, "The lookup process").

extension StringProtocol {
    /// `trimmingCharacters(in: .whitespaces)`: Foundation's `whitespaces` are Unicode's
    /// space separators (general category Zs) and the tab, not line ends.
    package var trimmingSpaces: String {
        trimming(where: { $0.value == 0x09 || $0.properties.generalCategory == .spaceSeparator })
    }

    /// The string without the scalars `blank` says yes to at its two ends (Foundation's
    /// `trimmingCharacters(in:)`, which also works on scalars).
    package func trimming(where blank: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        var start = scalars.startIndex, end = scalars.endIndex
        while start < end, blank(scalars[start]) { scalars.formIndex(after: &start) }
        while end > start, blank(scalars[scalars.index(before: end)]) { scalars.formIndex(before: &end) }
        var trimmed = String.UnicodeScalarView()
        trimmed.append(contentsOf: scalars[start..<end])
        return String(trimmed)
    }
}

/// `String(format:)` for numbers: C's `printf` formatting (the same digits and rounding
/// as Foundation's, which calls it too), `format` holding one conversion per argument.
package func formatted(_ format: String, _ arguments: any CVarArg...) -> String {
    withVaList(arguments) { list in
        var buffer = [CChar](repeating: 0, count: 256)
        let count = vsnprintf(&buffer, buffer.count, format, list)
        guard count >= buffer.count else { return String(cString: buffer) }
        return withVaList(arguments) { again in
            var larger = [CChar](repeating: 0, count: Int(count) + 1)
            _ = vsnprintf(&larger, larger.count, format, again)
            return String(cString: larger)
        }
    }
}

/// Writes `text` to the standard error, in one `write(2)` (FileHandle's, without
/// Foundation's module).
package func writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}
