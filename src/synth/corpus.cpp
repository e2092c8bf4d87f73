// Original prose written for hexllm (no third-party text). It only has to be ordinary English
// with the common words, so that the learned merges give whole-word tokens for everyday text.
#include "synth/corpus.h"

namespace hexllm::synth {

namespace {

constexpr std::string_view kCorpus = R"CORPUS(
The capital of France is Paris. The capital of Italy is Rome, and the capital of Spain is Madrid.
Paris is a large city on the river Seine, and many people visit it every year to see the old
buildings, the small streets and the famous museums. It is one of the most beautiful cities in
the world, and it has been the home of painters, writers and scientists for hundreds of years.

Every morning the baker in our town opens his shop at six o'clock. He makes bread, cakes and a
few kinds of small sweet rolls. People come in before work, and they buy what they need for the
day. The baker says that he has done this for thirty years, and that he still likes the smell of
fresh bread more than anything else. When I asked him why he gets up so early, he laughed and
said: "Because the bread will not wait for me, and neither will my customers."

Water is the most important thing for life on our planet. Plants, animals and people all need
it. About seventy percent of the surface of the Earth is covered by water, but most of it is salt
water in the oceans. Only a small part is fresh water that we can drink. Rivers, lakes and the
water under the ground give us what we use at home, on farms and in factories. If we want to have
enough water in the future, we should use it carefully and keep it clean.

My grandmother lived in a small house near the sea. She had a garden with apple trees, a few
chickens and a black cat that slept in the sun all afternoon. In the summer we visited her, and
we spent long days on the beach. In the evening she told us stories about the time when she was a
young girl. She remembered the war, the hard winters and the day her father came home after four
years. I think those stories taught me more about history than any book at school.

How does a computer work? At the simplest level, a computer is a machine that follows a list of
instructions. Each instruction is very small: add two numbers, compare two values, move some data
from one place to another. The machine can do billions of these steps every second, so together
they can solve large problems. A program is a list of instructions written by people, and a
language like C or Python helps us write programs in a way that is easier to read and to change.
Memory holds the data and the program while it runs, and the processor reads and writes it.

Version 3.1 shipped on May 4, 2023: 17% faster! The new release also fixed 12 bugs, added 2 new
commands and made the start time shorter. Version 3.2 followed in June, and version 4.0 came out
in January 2024 with a new user interface. The team wrote that they would keep working on speed,
because their users had asked for it again and again.

The weather today is cold and windy, with some rain in the afternoon. Tomorrow it will be warmer,
and the sun should come out by noon. On the weekend the temperature may reach 25 degrees, which is
good news for everyone who wants to go outside, walk in the park or have a picnic with friends.

Learning a new language takes time. You have to learn new words, new sounds and new rules, and
you have to practice every day. It helps to listen to music, to watch films and to talk with
people who speak the language well. Don't be afraid of mistakes: everyone makes them, and they
are part of learning. After a few months you'll notice that you understand much more than before,
and that you can say what you think without stopping to search for every word.

There was once a fox who lived at the edge of a forest. One day he saw a bird sitting in a tree
with a piece of cheese in its mouth. "What a beautiful bird," said the fox. "I am sure that your
voice is even more beautiful than your feathers. Will you sing for me?" The bird was pleased, and
it opened its mouth to sing. The cheese fell to the ground, and the fox ate it and ran away. The
bird learned that words that sound kind are not always meant kindly.

To make a simple soup, cut two onions, three carrots and a few potatoes into small pieces. Put
them in a pot with some oil and cook them for five minutes. Then add one liter of water, a little
salt and pepper, and let the soup boil slowly for about twenty minutes. When the vegetables are
soft, you can eat the soup as it is or make it smooth with a blender. Serve it hot with bread.

The history of science is full of questions that people could not answer for a long time. Why
does the sun rise in the east? What are the stars made of? How do plants grow from seeds? Over
many centuries, scientists learned to observe carefully, to measure, and to test their ideas with
experiments. Some ideas were wrong and had to be changed; others were right and became the base
of new knowledge. Today we know that the Earth turns around the sun, that stars are made mostly of
hydrogen and helium, and that every living thing is built from cells.

We're going to the mountains next week. We'll take the train to the last village and then walk
for two days to a lake high above the valley. I've never been there, but my brother has, and he
says it's the most peaceful place he knows. They've built a small hut near the water where
walkers can sleep. If the weather is good, we'll swim in the lake, even though the water is very
cold. I'm looking forward to it, and I hope that nothing will change our plans.

A good teacher does more than explain facts. She asks questions, listens to the answers and helps
each student find their own way to understand a problem. She knows that some students learn by
reading, some by listening and some by doing things with their hands. In her class, children are
not afraid to ask why, and they learn that thinking is a skill that gets better with practice.

The city council met on Tuesday to discuss the new bus lines. Most members agreed that the city
needs better public transport, because traffic has grown and the air in the center is not clean.
The plan would add three lines, buy forty new electric buses and build a station near the
hospital. It would cost about 60 million euros over five years. A final vote will take place next
month, after the people who live in the affected streets have been asked for their opinion.

Music can change how we feel in a few seconds. A slow song can make us sad or calm, and a fast one
can make us want to dance. Many people listen to music while they work or study, and some say that
it helps them think. Others need silence. Whatever you prefer, it is worth trying different styles:
you may find something you love in a kind of music you never listened to before.

Here is a short list of things to remember before a long trip: check your passport, pack light
clothes and a warm jacket, bring a charger for your phone, and write down the address of the place
where you will stay. It is also a good idea to carry some cash, a bottle of water and something to
read. If you travel by plane, arrive at the airport at least two hours before the flight.

Numbers are everywhere in daily life: 1, 2, 3, 10, 100 and 1000 are easy, but what about 3.14159
or 2.71828? The first is called pi, and it is the ratio of a circle's length to its width. The
second is the base of natural growth. A year has 365 days, or 366 in a leap year; a day has 24
hours; an hour has 60 minutes, and a minute has 60 seconds. In 1969, people walked on the moon.

I think the best part of the day is the early evening, when the work is done and the light turns
soft and golden. The streets become quiet, the birds sing one last time, and families sit down
together to eat. It's a good moment to call a friend, to read a few pages of a book, or simply to
sit by the window and watch the world slow down before the night begins.
)CORPUS";

}  // namespace

std::string_view builtin_corpus() { return kCorpus; }

}  // namespace hexllm::synth
