import StationSupport

/// Words the generator builds Japanese-looking names and addresses from.
package enum SynthVocabulary {
    package static let prefectures = [
        "北海道", "青森県", "岩手県", "宮城県", "秋田県", "山形県", "福島県", "茨城県", "栃木県", "群馬県", "埼玉県", "千葉県",
        "東京都", "神奈川県", "新潟県", "富山県", "石川県", "福井県", "山梨県", "長野県", "岐阜県", "静岡県", "愛知県", "三重県",
        "滋賀県", "京都府", "大阪府", "兵庫県", "奈良県", "和歌山県", "鳥取県", "島根県", "岡山県", "広島県", "山口県", "徳島県",
        "香川県", "愛媛県", "高知県", "福岡県", "佐賀県", "長崎県", "熊本県", "大分県", "宮崎県", "鹿児島県", "沖縄県",
    ]
    package static let prefixes = ["新", "大", "東", "西", "南", "北", "中", "上", "下", "本", "小", "高", "若", "古", "青", "白", "赤", "桜", "松", "竹"]
    package static let stems = [
        "山", "川", "田", "原", "野", "島", "橋", "沢", "井", "宮", "岡", "浜", "谷", "崎", "津", "森", "林", "坂", "池", "瀬",
        "戸", "木", "尾", "石", "塚", "倉", "城", "町", "江", "久保",
    ]
    package static let suffixes = ["", "", "", "", "前", "口", "台", "町", "ケ丘", "温泉", "公園", "駅前", "本町", "中央"]
    package static let cities = ["市", "町", "村", "区"]
    package static let fullWidthDigits = ["０", "１", "２", "３", "４", "５", "６", "７", "８", "９"]

    /// Regions of Japan a line may lie in: a box of latitude and longitude, its prefectures,
    /// and how many lines of a hundred fall there (roughly as the real network does).
    package static let regions: [(south: Double, west: Double, north: Double, east: Double, prefectures: ClosedRange<Int>, share: Int)] = [
        (42.0, 140.5, 44.5, 144.5, 1...1, 5), (37.5, 139.8, 40.8, 141.8, 2...7, 8),
        (35.3, 139.0, 36.5, 140.5, 8...14, 35), (35.0, 136.5, 37.5, 138.8, 15...23, 14),
        (34.3, 135.0, 35.3, 136.3, 24...30, 18), (34.0, 131.5, 35.5, 134.5, 31...35, 6),
        (33.3, 132.7, 34.3, 134.5, 36...39, 4), (31.3, 129.8, 33.8, 131.8, 40...46, 10),
    ]

    package static func name(_ random: inout SplitMix64) -> String {
        var name = ""
        if random.below(3) == 0 { name += prefixes[random.below(prefixes.count)] }
        name += stems[random.below(stems.count)] + stems[random.below(stems.count)]
        return name + suffixes[random.below(suffixes.count)]
    }

    package static func fullWidth(_ number: Int) -> String { String(number).map { fullWidthDigits[Int(String($0))!] }.joined() }

    package static func padded(_ number: Int, _ width: Int) -> String {
        let text = String(number)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// `35.681236` from 35.6812364: fixed six decimals without `String(format:)`, which is slow.
    package static func degrees(_ value: Double) -> String {
        let micro = Int((value * 1_000_000).rounded())
        let fraction = String(micro % 1_000_000)
        return "\(micro / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }
}
