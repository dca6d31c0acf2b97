/// The decode sizes in points a warm was given (`--size`), as the cache records them
/// (`cacheSetting.decodeSizes`): ascending, comma separated, `110,300`. The lookup's tier
/// rule starts from the smallest: a view of `v` points needs max(v × 2, smallest) points.
public enum DecodeSizes {
    /// The smallest of the default sizes (110 and 300): the floor for a cache that
    /// recorded none.
    public static let defaultSmallest = 110

    /// The recorded form of `sizes` (distinct, ascending); nil when none is above 0.
    public static func text(_ sizes: [Int]) -> String? {
        let distinct = Set(sizes.filter { $0 > 0 }).sorted()
        return distinct.isEmpty ? nil : distinct.map(String.init).joined(separator: ",")
    }

    /// The sizes of a recorded text, ascending; nil unless every part is a whole number
    /// above 0.
    public static func parse(_ text: String) -> [Int]? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        let sizes = parts.compactMap { Int($0) }.filter { $0 > 0 }
        guard !sizes.isEmpty, sizes.count == parts.count else { return nil }
        return sizes.sorted()
    }
}
