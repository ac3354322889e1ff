package dataset

import (
	"fmt"
	"strings"
)

// The word lists the synthetic cast and plots are drawn from. Changing one
// changes the dataset, and a deployment loaded before then fails verify.
var (
	womenNames = []string{
		"Ada", "Alice", "Amara", "Anna", "Beatrice", "Camille", "Clara", "Daphne", "Elena", "Eliza",
		"Farah", "Freya", "Greta", "Hana", "Helen", "Ines", "Irene", "Julia", "Kira", "Lena",
		"Lucia", "Mara", "Maya", "Nadia", "Nora", "Olivia", "Paula", "Rosa", "Ruth", "Selma",
		"Sofia", "Tara", "Vera", "Wanda", "Yara", "Zoe",
	}
	menNames = []string{
		"Aaron", "Adrian", "Anton", "Arthur", "Bruno", "Caleb", "Carlos", "Daniel", "Elias", "Felix",
		"Gabriel", "Hugo", "Isaac", "Ivan", "Jonah", "Jules", "Kenji", "Leon", "Luca", "Marco",
		"Mateo", "Nico", "Omar", "Oscar", "Pablo", "Rafael", "Ravi", "Samuel", "Silas", "Tobias",
		"Victor", "Walter", "Xavier", "Yusuf", "Zane", "Theo",
	}
	surnames = []string{
		"Abbott", "Alvarez", "Baker", "Bergström", "Brennan", "Castillo", "Chen", "Costa", "Dalton", "Delacroix",
		"Dunn", "Eriksen", "Ferreira", "Fischer", "Garner", "Haddad", "Hale", "Ibarra", "Ito", "Jansen",
		"Kaur", "Keller", "Kowalski", "Laurent", "Lindqvist", "Marsh", "Mendez", "Moreau", "Nakamura", "Novak",
		"Okafor", "Osei", "Park", "Petrov", "Quinn", "Rahman", "Reyes", "Rossi", "Sato", "Schmidt",
		"Silva", "Sørensen", "Tanaka", "Thorne", "Varga", "Vance", "Weber", "Whitfield", "Yilmaz", "Zhang",
	}
	birthplaces = []string{
		"Lisbon", "Toronto", "Osaka", "Melbourne", "Lagos", "Chicago", "Lyon", "Krakow", "Seville", "Dublin",
		"Mumbai", "Nairobi", "Oslo", "Buenos Aires", "Seoul", "Manchester", "Montreal", "Naples", "Austin", "Gothenburg",
	}
	knownFor = []string{
		"stage work in repertory theatre", "a long run on a television drama", "independent comedies",
		"voice work in animated features", "action films", "period dramas", "a breakout role in a crime thriller",
		"character parts in ensemble casts", "musical theatre", "documentary narration",
	}
	roles = []string{
		"detective", "schoolteacher", "pilot", "journalist", "surgeon", "smuggler", "retired boxer", "architect",
		"lighthouse keeper", "chef", "lawyer", "astronaut", "park ranger", "violinist", "mechanic", "con artist",
	}
	places = []string{
		"a coastal town", "a sprawling city", "a mountain village", "a failing circus", "a snowbound hotel",
		"a border outpost", "a space station", "a vineyard", "a small island", "a newsroom", "a boarding school",
		"a desert mining town",
	}
	troubles = []string{
		"a stranger arrives with a secret", "a long-buried crime resurfaces", "a storm cuts them off from the world",
		"an inheritance sets the family against itself", "a heist goes wrong", "an old rival returns",
		"a letter from the past changes everything", "a deadly outbreak spreads", "a fortune goes missing",
		"a rigged election is exposed",
	}
	endings = []string{
		"before it is too late", "at the cost of everything they love", "with help from the least likely ally",
		"while the whole town watches", "and learns what loyalty means", "in a race against the clock",
		"as old friendships break apart", "and finds an unexpected home",
	}
)

// newCastInfo is a cast member's record: a name fitting its gender, and an
// introduction.
func newCastInfo(id int64, h hasher) CastInfo {
	man := h.intn("gender", 2) == 1
	first := h.pick("first", womenNames)
	if man {
		first = h.pick("first", menNames)
	}
	name := first + " " + h.pick("surname", surnames)
	pronoun := "She"
	if man {
		pronoun = "He"
	}
	intro := fmt.Sprintf("%s was born in %s in %d. %s is known for %s.",
		name, h.pick("birthplace", birthplaces), 1940+h.intn("born", 65), pronoun, h.pick("known_for", knownFor))
	return CastInfo{CastInfoID: id, Name: name, Gender: man, Intro: intro}
}

// character is the role a cast member plays.
func character(h hasher) string {
	first := womenNames
	if h.intn("character_gender", 2) == 1 {
		first = menNames
	}
	return h.pick("character_first", first) + " " + h.pick("character_surname", surnames)
}

// plot tells a story about the first two characters.
func plot(title, lead, other string, h hasher) string {
	var b strings.Builder
	fmt.Fprintf(&b, "In %s, %s %s, %s, ", h.pick("place", places), article(h.pick("role", roles)), h.pick("role", roles), lead)
	fmt.Fprintf(&b, "is drawn into trouble when %s. ", h.pick("trouble", troubles))
	fmt.Fprintf(&b, "Together with %s, %s must set things right %s. ", other, firstName(lead), h.pick("ending", endings))
	fmt.Fprintf(&b, "%s runs %d minutes.", title, 85+h.intn("minutes", 70))
	return b.String()
}

func article(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an"
	}
	return "a"
}

func firstName(name string) string {
	first, _, _ := strings.Cut(name, " ")
	return first
}
