#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ISO 8601 with or without fractional seconds; the form metadata.json writes.
/// RFC 3339 timestamps ("2026-11-21T23:45:04.029Z"), read and written by hand: the
/// cache's metadata holds several per entry and profile, and ICU's formatter took half
/// of a re-run's time. Anything the fast path does not recognise (unusual offsets,
/// week dates) goes to Foundation's `Date.ISO8601FormatStyle`.
package enum ISO8601 {
    /// Foundation's ISO 8601 parser, for the forms the fast path leaves.
    private static func parseSlow(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }

    package static func parse(_ text: String) -> Date? {
        var text = text
        if let date = text.withUTF8({ parseFast($0) }) { return date }
        return parseSlow(text)
    }

    /// Milliseconds (nearest), UTC, "Z": the form every file this tool writes uses.
    package static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `format(date)`'s bytes (the metadata writer calls this for every date).
    package static func append(_ date: Date, to bytes: inout [UInt8]) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (days, rest) = floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        guard (0...9999).contains(year) else {
            bytes.append(contentsOf: Array(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)).utf8))
            return
        }
        let hour = Int(rest / 3_600_000), minute = Int(rest / 60_000 % 60)
        let second = Int(rest / 1000 % 60), millisecond = Int(rest % 1000)
        func two(_ value: Int) { bytes.append(UInt8(48 + value / 10)); bytes.append(UInt8(48 + value % 10)) }
        two(year / 100); two(year % 100); bytes.append(45); two(month); bytes.append(45); two(day); bytes.append(84)
        two(hour); bytes.append(58); two(minute); bytes.append(58); two(second); bytes.append(46)
        bytes.append(UInt8(48 + millisecond / 100)); two(millisecond % 100); bytes.append(90)
    }

    /// YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM), or nil.
    package static func parseFast(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        var index = 0
        func number(_ width: Int) -> Int? {
            guard index + width <= text.count else { return nil }
            var value = 0
            for _ in 0..<width {
                let digit = Int(text[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
                index += 1
            }
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < text.count, text[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2),
              index < text.count, text[index] == 84 || text[index] == 116 else { return nil }
        index += 1
        guard let hour = number(2), expect(58), let minute = number(2), expect(58), let second = number(2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 61 else { return nil }
        var fraction = 0.0
        if index < text.count, text[index] == 46 {
            index += 1
            var scale = 0.1, digits = 0
            while index < text.count, (48...57).contains(text[index]) {
                fraction += Double(text[index] - 48) * scale
                scale /= 10
                index += 1
                digits += 1
            }
            guard digits > 0 else { return nil }
        }
        guard index < text.count else { return nil }
        var offset = 0
        switch text[index] {
        case 90, 122:
            index += 1
        case 43, 45:
            let sign = text[index] == 45 ? -1 : 1
            index += 1
            guard let hours = number(2), expect(58), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        default:
            return nil
        }
        guard index == text.count else { return nil }
        let days = Self.days(fromCivil: year, month, day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset)
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
        return (quotient, value - quotient * divisor)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
