import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

public class Grades {
    record Student(String name, int score) {}

    static char letter(int score) {
        return score >= 90 ? 'A' : score >= 80 ? 'B' : score >= 70 ? 'C' : 'F';
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        List<Student> students = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.trim().split("\\s+");
            if (parts.length == 2) {
                students.add(new Student(parts[0], Integer.parseInt(parts[1])));
            }
        }
        students.sort(Comparator.comparingInt(Student::score).reversed().thenComparing(Student::name));
        int[] perLetter = new int[4];
        long sum = 0;
        for (Student s : students) {
            sum += s.score();
            perLetter["ABCF".indexOf(letter(s.score()))]++;
        }
        for (int i = 0; i < Math.min(3, students.size()); i++) {
            System.out.println(students.get(i).name() + " " + students.get(i).score());
        }
        double avg = students.isEmpty() ? 0 : (double) sum / students.size();
        System.out.printf("average %.2f%n", avg);
        for (int i = 0; i < 4; i++) {
            System.out.println("ABCF".charAt(i) + ": " + perLetter[i]);
        }
    }
}
