// The initials of a million display names, timed in one process: the store corpus's names
// (scripts/benchmark/store_corpus.py: 28 given names and 36 family names, a quarter of the
// names not ASCII), each a string of its own as an export's reader makes it. Compiled by
// scripts/bench-initials with the module's Initials.swift and the model's Text.swift.
import Foundation

let first = ["Ann", "Bo", "Chen", "Dara", "Émile", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kofi", "Lía", "Mina", "Noor",
             "Olu", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Vik", "Wen", "Xóchitl", "Yuki", "Zoë", "Łukasz", "Ömer"]
let last = ["Lee", "Okafor", "Silva", "Nguyen", "Kowalski", "Haddad", "Tanaka", "Müller", "Rossi", "Kim", "Abebe", "Bauer",
            "Castro", "Dubois", "Eriksson", "Fischer", "García", "Hughes", "Iyer", "Jansen", "Kaur", "Larsen", "Moreau",
            "Novak", "Ortiz", "Petrov", "Quispe", "Ramos", "Sato", "Torres", "Ueda", "Vargas", "Weber", "Xu", "Yilmaz", "Zhang"]
let names = (0..<1_000_000).map { i in
    String(decoding: Array("\(first[i % first.count]) \(last[(i / first.count) % last.count])".utf8), as: UTF8.self)
}
var line = ""
for part in ["all", "ascii", "other"] {
    let subset = names.filter { part == "all" || (part == "ascii") == $0.utf8.allSatisfy { $0 < 0x80 } }
    var clock = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &clock)
    let start = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9
    var bytes = 0
    for name in subset { bytes &+= Initials.from(displayName: name).utf8.count }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &clock)
    let seconds = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 - start
    line += String(format: "%@ %d names %.3f s CPU (%.0f ns a name, %d bytes)  ", part, subset.count, seconds, seconds * 1e9 / Double(subset.count), bytes)
}
print(line)
