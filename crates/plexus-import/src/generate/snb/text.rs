//! Word lists: person names by language, browsers, e-mail domains, message text and the syllables that make up
//! the synthetic names of tags and organisations.

use plexus::random::SplitMix;

/// First names and last names of one naming tradition.
pub(crate) struct Names {
    pub first: &'static [&'static str],
    pub last: &'static [&'static str],
}

const EN: Names = Names {
    first: &[
        "John", "Mary", "James", "Emma", "Robert", "Olivia", "David", "Sarah", "Michael", "Laura", "William", "Emily",
        "Thomas", "Jessica", "Daniel", "Hannah", "Peter", "Alice", "George", "Grace",
    ],
    last: &[
        "Smith", "Johnson", "Brown", "Taylor", "Wilson", "Davies", "Evans", "Thomas", "Roberts", "Walker", "Wright",
        "Thompson", "White", "Hughes", "Green", "Hall", "Clarke", "Jackson", "Wood", "Turner",
    ],
};
const ES: Names = Names {
    first: &[
        "Jose",
        "Maria",
        "Juan",
        "Carmen",
        "Carlos",
        "Ana",
        "Luis",
        "Isabel",
        "Miguel",
        "Lucia",
        "Jorge",
        "Elena",
        "Pedro",
        "Sofia",
        "Alejandro",
        "Paula",
        "Diego",
        "Marta",
        "Pablo",
        "Rosa",
    ],
    last: &[
        "Garcia",
        "Rodriguez",
        "Gonzalez",
        "Fernandez",
        "Lopez",
        "Martinez",
        "Sanchez",
        "Perez",
        "Gomez",
        "Martin",
        "Jimenez",
        "Ruiz",
        "Hernandez",
        "Diaz",
        "Moreno",
        "Alonso",
        "Romero",
        "Navarro",
        "Torres",
        "Ramos",
    ],
};
const PT: Names = Names {
    first: &[
        "Joao", "Ana", "Pedro", "Mariana", "Lucas", "Beatriz", "Gabriel", "Camila", "Rafael", "Juliana", "Bruno",
        "Fernanda", "Tiago", "Larissa", "Mateus",
    ],
    last: &[
        "Silva", "Santos", "Oliveira", "Souza", "Costa", "Pereira", "Ferreira", "Almeida", "Carvalho", "Ribeiro",
        "Lima", "Araujo", "Barbosa", "Rocha", "Alves",
    ],
};
const DE: Names = Names {
    first: &[
        "Hans", "Anna", "Peter", "Julia", "Klaus", "Katrin", "Stefan", "Sabine", "Jan", "Lena", "Lukas", "Monika",
        "Jens", "Petra", "Wolfgang",
    ],
    last: &[
        "Muller",
        "Schmidt",
        "Schneider",
        "Fischer",
        "Weber",
        "Meyer",
        "Wagner",
        "Becker",
        "Schulz",
        "Hoffmann",
        "Koch",
        "Richter",
        "Klein",
        "Wolf",
        "Neumann",
    ],
};
const FR: Names = Names {
    first: &[
        "Jean", "Marie", "Pierre", "Camille", "Louis", "Claire", "Antoine", "Chloe", "Nicolas", "Manon", "Julien",
        "Sophie", "Francois", "Amelie", "Mamadou",
    ],
    last: &[
        "Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand", "Leroy", "Moreau", "Simon",
        "Laurent", "Lefebvre", "Diallo", "Traore",
    ],
};
const IT: Names = Names {
    first: &["Giovanni", "Giulia", "Marco", "Francesca", "Luca", "Chiara", "Andrea", "Sara", "Matteo", "Elena"],
    last: &["Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo", "Ricci", "Marino", "Greco"],
};
const RU: Names = Names {
    first: &[
        "Ivan", "Olga", "Sergei", "Natalia", "Dmitri", "Elena", "Alexei", "Irina", "Anatoly", "Svetlana", "Nikolai",
        "Tatiana", "Yuri", "Anna", "Mikhail",
    ],
    last: &[
        "Ivanov",
        "Smirnov",
        "Kuznetsov",
        "Popov",
        "Sokolov",
        "Lebedev",
        "Kozlov",
        "Novikov",
        "Morozov",
        "Petrov",
        "Volkov",
        "Shevchenko",
        "Bondarenko",
        "Kovalenko",
        "Pavlov",
    ],
};
const ZH: Names = Names {
    first: &[
        "Wei", "Fang", "Lei", "Jing", "Chong", "Li", "Yang", "Min", "Jun", "Hui", "Jie", "Ying", "Bo", "Xin", "Hao",
    ],
    last: &[
        "Wang", "Li", "Zhang", "Liu", "Chen", "Yang", "Huang", "Zhao", "Wu", "Zhou", "Xu", "Sun", "Ma", "Zhu", "Hu",
    ],
};
const JA: Names = Names {
    first: &["Hiroshi", "Yuki", "Takeshi", "Akiko", "Kenji", "Naoko", "Haruto", "Sakura", "Daichi", "Aoi"],
    last: &["Sato", "Suzuki", "Takahashi", "Tanaka", "Watanabe", "Ito", "Yamamoto", "Nakamura", "Kobayashi", "Kato"],
};
const AR: Names = Names {
    first: &[
        "Mohamed", "Fatima", "Ahmed", "Aisha", "Ali", "Mariam", "Omar", "Layla", "Hassan", "Zainab", "Yahya",
        "Khadija", "Karim", "Nour", "Youssef",
    ],
    last: &[
        "Ahmed", "Hassan", "Ali", "Ibrahim", "Mahmoud", "Abdallah", "Khan", "Hussein", "Saleh", "Haddad", "Rahman",
        "Aziz", "Karimi", "Farouk", "Nasser",
    ],
};
const HI: Names = Names {
    first: &[
        "Rahul", "Priya", "Amit", "Anjali", "Vijay", "Sunita", "Arjun", "Deepa", "Ravi", "Kavya", "Sanjay", "Pooja",
        "Anil", "Meera", "Karan",
    ],
    last: &[
        "Sharma", "Kumar", "Singh", "Patel", "Gupta", "Reddy", "Rao", "Nair", "Iyer", "Das", "Joshi", "Mehta", "Bose",
        "Chopra", "Verma",
    ],
};
const SEA: Names = Names {
    first: &["Nguyen", "Anh", "Budi", "Siti", "Somchai", "Malee", "Jose", "Maria", "Arief", "Dewi", "Minh", "Linh"],
    last: &["Nguyen", "Tran", "Le", "Pham", "Santoso", "Wijaya", "Reyes", "Cruz", "Bautista", "Srisai", "Hoang"],
};
const OTHER: Names = Names {
    first: &[
        "Alex", "Nina", "Mark", "Eva", "Adam", "Ida", "Leo", "Mila", "Ivo", "Lea", "Jan", "Eszter", "Andrei", "Kofi",
        "Amina", "Tomas", "Kwame", "Zeynep",
    ],
    last: &[
        "Nowak", "Horvat", "Jensen", "Nielsen", "Novak", "Kovacs", "Popescu", "Yilmaz", "Mensah", "Okafor", "Kariuki",
        "Berg", "Virtanen", "Ozturk", "Kim", "Park", "Cohen",
    ],
};

/// The names used for a country's main language.
pub(crate) fn names_for(lang: &str) -> &'static Names {
    match lang {
        "en" => &EN,
        "es" => &ES,
        "pt" => &PT,
        "de" | "nl" => &DE,
        "fr" => &FR,
        "it" => &IT,
        "ru" | "uk" | "be" | "kk" | "bg" | "mk" | "tg" | "mn" => &RU,
        "zh" => &ZH,
        "ja" => &JA,
        "ar" | "ur" | "fa" | "ps" | "he" | "az" | "tr" => &AR,
        "hi" | "ne" | "si" => &HI,
        "vi" | "id" | "ms" | "tl" | "th" | "lo" | "km" | "my" => &SEA,
        _ => &OTHER,
    }
}

/// Second languages a person may speak besides their country's and English.
pub(crate) const EXTRA_LANGUAGES: [&str; 8] = ["fr", "es", "de", "ru", "ar", "zh", "pt", "it"];

/// Browsers and their shares, in percent (about those of the tiny data set).
pub(crate) const BROWSERS: [(&str, u64); 5] =
    [("Firefox", 39), ("Chrome", 29), ("Internet Explorer", 23), ("Safari", 6), ("Opera", 3)];

pub(crate) fn browser(rng: &mut SplitMix) -> u8 {
    let mut r = rng.below(100);
    for (k, &(_, share)) in BROWSERS.iter().enumerate() {
        if r < share {
            return k as u8;
        }
        r -= share;
    }
    0
}

pub(crate) const EMAIL_DOMAINS: [&str; 6] = ["gmail.com", "gmx.com", "yahoo.com", "hotmail.com", "zoho.com", "gmx.de"];

/// Short comments, as most comments in the LDBC data are.
pub(crate) const SHORT_COMMENTS: [&str; 16] = [
    "yes", "no", "LOL", "maybe", "fine", "no way!", "good", "great", "I see", "right", "ok", "thx", "thanks", "cool",
    "roflol", "duh",
];

const WORDS: [&str; 64] = [
    "the",
    "of",
    "and",
    "in",
    "was",
    "is",
    "for",
    "as",
    "with",
    "by",
    "his",
    "her",
    "first",
    "which",
    "album",
    "released",
    "born",
    "known",
    "city",
    "world",
    "war",
    "music",
    "film",
    "played",
    "career",
    "became",
    "team",
    "years",
    "state",
    "national",
    "new",
    "song",
    "country",
    "history",
    "after",
    "during",
    "most",
    "several",
    "record",
    "won",
    "league",
    "president",
    "government",
    "university",
    "published",
    "series",
    "novel",
    "king",
    "empire",
    "river",
    "season",
    "award",
    "band",
    "single",
    "chart",
    "studio",
    "early",
    "later",
    "public",
    "director",
    "party",
    "church",
    "member",
    "famous",
];

/// Appends about `len` bytes of text: `About <topic>, ` then words.
pub(crate) fn about(rng: &mut SplitMix, topic: &str, len: usize, out: &mut String) {
    out.push_str("About ");
    out.extend(topic.chars().map(|c| if c == '_' { ' ' } else { c }));
    out.push(',');
    while out.len() < len {
        out.push(' ');
        out.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
    }
    out.push('.');
}

const ONSETS: [&str; 20] =
    ["b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr", "ch"];
const VOWELS: [&str; 8] = ["a", "e", "i", "o", "u", "ai", "ea", "ou"];
const CODAS: [&str; 8] = ["", "", "n", "r", "s", "l", "m", "th"];

/// A capitalised pronounceable word of two or three syllables.
pub(crate) fn word(rng: &mut SplitMix, out: &mut String) {
    let start = out.len();
    for _ in 0..2 + rng.below(2) {
        out.push_str(ONSETS[rng.below(ONSETS.len() as u64) as usize]);
        out.push_str(VOWELS[rng.below(VOWELS.len() as u64) as usize]);
    }
    out.push_str(CODAS[rng.below(CODAS.len() as u64) as usize]);
    let first = out[start..start + 1].to_ascii_uppercase();
    out.replace_range(start..start + 1, &first);
}
